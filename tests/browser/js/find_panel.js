// The notebook panel open at `path` (relative to the server root), or null. Every other script here
// gets this function as `findPanel` (lab_page.js_function wraps them). JupyterLab exposes its
// application as window.jupyterapp when started with --LabApp.expose_app_in_browser=True.
(path) => {
  const app = window.jupyterapp;
  if (!app) return null;
  for (const w of app.shell.widgets('main')) {
    if (w.context && w.context.path === path && w.content && w.content.widgets) return w;
  }
  return null;
}
