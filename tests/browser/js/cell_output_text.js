// The text of the output area of cell `index`.
([path, index]) => {
  const panel = findPanel(path);
  if (!panel) return '';
  const area = panel.content.widgets[index].node.querySelector('.jp-OutputArea');
  return area ? area.innerText : '';
}
