// Keyboard walk through the ipywidgets view in the output of cell `index`: every part of it that
// takes the focus with Tab (a slider's handle and its editable readout, a text field, a select, a
// button) is tagged data-browser-test-kbd="<n>"; a focusable marker (a <span tabindex=0>, which
// is neither a code editor nor a control) is put just before the view, where the walk starts.
// Returns the parts, in document order, as {tag, what, control}.
([path, index]) => {
  const cell = findPanel(path).content.widgets[index];
  const view = cell.node.querySelector('.jp-OutputArea-output .jupyter-widgets');
  if (!view) return null;
  const root = view.closest('.jp-OutputArea-output');
  const SEL = 'a[href], button, input:not([type=hidden]), select, textarea, summary, ' +
              '[contenteditable="true"], [tabindex]:not([tabindex="-1"])';
  const parts = [...root.querySelectorAll(SEL)]
    // a contenteditable <div> (a slider's readout) takes the focus with Tab, yet its tabIndex
    // property reads -1 in Chromium: tabIndex alone would leave it out
    .filter(e => !e.disabled && e.getClientRects().length > 0
                 && (e.tabIndex >= 0 || (e.isContentEditable && e.getAttribute('tabindex') !== '-1')));
  document.querySelectorAll('[data-browser-test-kbd-start]').forEach(e => e.remove());
  const start = document.createElement('span');
  start.tabIndex = 0;
  start.setAttribute('data-browser-test-kbd-start', '');
  start.textContent = ' ';
  root.prepend(start);
  return parts.map((e, n) => {
    e.setAttribute('data-browser-test-kbd', String(n));
    const box = e.closest('.widget-inline-hbox, .jupyter-widgets');
    const label = box && box.querySelector('.widget-label');
    const cls = typeof e.className === 'string' && e.className ? '.' + e.className.split(' ')[0] : '';
    return {tag: String(n), what: e.tagName.toLowerCase() + cls,
            control: label ? label.innerText.trim() : ''};
  });
}
