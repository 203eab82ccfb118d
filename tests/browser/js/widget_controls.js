// The ipywidgets controls in the output of cell `index`, each tagged with a data attribute that a
// locator finds, and the sources of the cell's images (a redraw replaces them).
([path, index]) => {
  const panel = findPanel(path);
  const cell = panel.content.widgets[index];
  const kinds = [
    ['slider', '.widget-slider, .widget-hslider'],
    ['dropdown', '.widget-dropdown'],
    ['text', '.widget-text, .widget-inttext, .widget-floattext, .widget-bounded-inttext, .widget-bounded-floattext'],
    ['toggle', '.widget-toggle-buttons'],
    ['radio', '.widget-radio'],
    ['checkbox', '.widget-checkbox'],
  ];
  const seen = new Set();
  const controls = [];
  let k = 0;
  for (const [kind, sel] of kinds) {
    for (const el of cell.node.querySelectorAll(sel)) {
      if (seen.has(el) || el.closest('.jp-OutputArea') === null) continue;
      seen.add(el);
      const label = el.querySelector('.widget-label');
      const disabled = !!el.querySelector('[disabled]') || el.classList.contains('mod-disabled');
      const id = index + '-' + k;
      el.setAttribute('data-browser-test-control', id);
      controls.push({id, kind, description: label ? label.innerText.trim() : '', disabled});
      k += 1;
    }
  }
  const srcs = Array.from(cell.node.querySelectorAll('.jp-OutputArea img')).map(i => i.getAttribute('src') || '');
  return {controls, srcs};
}
