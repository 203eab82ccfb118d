// Bring the notebook to the front and clear its outputs (before "Restart Kernel and Run All").
(path) => {
  const panel = findPanel(path);
  if (!panel) return false;
  const app = window.jupyterapp;
  app.shell.activateById(panel.id);
  return app.commands.execute('notebook:clear-all-cell-outputs').then(() => true);
}
