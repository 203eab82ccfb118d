// The images in the output of cell `index`, with whether each has loaded.
([path, index]) => {
  const panel = findPanel(path);
  if (!panel) return [];
  return Array.from(panel.content.widgets[index].node.querySelectorAll('.jp-OutputArea img')).map(
    i => ({src: i.getAttribute('src') || '', ok: i.complete && i.naturalWidth > 0}));
}
