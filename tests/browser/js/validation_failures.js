// nbgrader's Validate dialog (the #validation-message element): for each failed cell, its source
// and the error the dialog prints under it. The dialog is a sequence of <div>s: a <p> "The following
// cell failed:", then the cell's source (<pre>), then the error output (<pre>).
(m) => {
  const out = [];
  for (const p of Array.from(m.querySelectorAll('p'))) {
    if (!p.innerText.includes('The following cell failed')) continue;
    const src = p.parentElement.nextElementSibling;
    const err = src ? src.nextElementSibling : null;
    out.push({source: src ? src.innerText : '', error: err ? err.innerText : ''});
  }
  return out;
}
