// What a reader would see go wrong on the page: stderr and tracebacks, figures printed as text
// ("<Figure size ...>"), every <img> (output or markdown) with whether it loaded, widget cells.
(path) => {
  const panel = findPanel(path);
  const res = {stderr: [], tracebacks: [], figureReprs: [], images: [], widgetCells: []};
  if (!panel) return res;
  panel.content.widgets.forEach((cell, i) => {
    for (const el of cell.node.querySelectorAll('.jp-RenderedText[data-mime-type="application/vnd.jupyter.stderr"]')) {
      const t = el.innerText;
      res.stderr.push({cell: i, text: t.slice(0, 2000)});
      if (/Traceback|Error\b/.test(t)) res.tracebacks.push({cell: i, text: t.slice(0, 4000)});
    }
    for (const el of cell.node.querySelectorAll('.jp-RenderedText[data-mime-type="text/plain"]')) {
      if (/<Figure size [^>]*>/.test(el.innerText)) res.figureReprs.push({cell: i, text: el.innerText.slice(0, 200)});
    }
    for (const img of cell.node.querySelectorAll('img')) {
      const inOutput = !!img.closest('.jp-OutputArea');
      res.images.push({cell: i, where: inOutput ? 'output' : 'markdown', complete: img.complete,
                       naturalWidth: img.naturalWidth, src: (img.getAttribute('src') || '').slice(0, 200),
                       alt: img.getAttribute('alt') || ''});
    }
    if (cell.model.type === 'code') {
      const outs = cell.model.outputs;
      for (let j = 0; j < outs.length; j++) {
        const o = outs.get(j).toJSON();
        if (o.data && o.data['application/vnd.jupyter.widget-view+json']) { res.widgetCells.push(i); break; }
      }
    }
  });
  return res;
}
