// How tall the notebook's content is and how much of it the window shows (for a full screenshot).
(path) => {
  const panel = findPanel(path);
  if (!panel) return null;
  const outer = panel.node.querySelector('.jp-WindowedPanel-outer') || panel.content.node;
  return {scroll: outer.scrollHeight, client: outer.clientHeight};
}
