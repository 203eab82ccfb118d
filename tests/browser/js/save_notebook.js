// Write a notebook (nbformat JSON) through the server's contents API, as the logged-in user:
// JupyterLab's own ServiceManager adds the credentials (token or the hub's cookie and XSRF header).
async ([path, content]) => {
  const model = await window.jupyterapp.serviceManager.contents.save(path, {type: 'notebook', format: 'json', content});
  return {path: model.path, last_modified: model.last_modified};
}
