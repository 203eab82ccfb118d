// Each code cell of the notebook at `path`: its nbgrader role, whether JupyterLab made it read-only
// (metadata "editable": false), and what its editor tells assistive technology (aria-readonly,
// contenteditable). Each cell's node is marked data-course-cell=<index>, for the accessibility tree.
(path) => {
  const panel = findPanel(path);
  if (!panel) return null;
  const cells = [];
  panel.content.widgets.forEach((cell, k) => {
    if (cell.model.type !== 'code') return;
    cell.node.setAttribute('data-course-cell', String(k));
    const nb = cell.model.getMetadata('nbgrader') || {};
    const content = cell.node.querySelector('.cm-content');
    cells.push({index: k, gradeId: nb.grade_id || '', locked: !!nb.locked, solution: !!nb.solution,
                readOnly: cell.readOnly, deletable: cell.model.getMetadata('deletable') !== false,
                ariaReadonly: content ? content.getAttribute('aria-readonly') : null,
                contenteditable: content ? content.getAttribute('contenteditable') : null});
  });
  return cells;
}
