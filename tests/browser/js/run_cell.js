// Run the code cell at `index` of the notebook open at `path` alone, as Ctrl+Enter does (the focus stays
// on it); not awaited: the caller waits for its execution count (lab_page.run_cell).
([path, index]) => {
  const panel = findPanel(path);
  if (!panel) return false;
  const app = window.jupyterapp;
  app.shell.activateById(panel.id);
  panel.content.deselectAll();
  panel.content.activeCellIndex = index;
  app.commands.execute('notebook:run-cell');
  return true;
}
