// Every <img> of the rendered markdown cells: its source as written in the cell (the renderer
// resolves it to a URL of the server) and whether the browser loaded it.
(path) => {
  const panel = findPanel(path);
  if (!panel) return null;
  const out = [];
  panel.content.widgets.forEach((cell, i) => {
    if (cell.model.type !== 'markdown') return;
    for (const img of cell.node.querySelectorAll('.jp-RenderedMarkdown img')) {
      out.push({cell: i, src: img.getAttribute('src') || '', currentSrc: img.currentSrc || '',
                alt: img.getAttribute('alt') || '', complete: img.complete, naturalWidth: img.naturalWidth,
                rendered: cell.rendered});
    }
  });
  return out;
}
