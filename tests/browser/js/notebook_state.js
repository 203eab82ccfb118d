// The state of a notebook's run: kernel status, code cells run / pending, error outputs.
(path) => {
  const panel = findPanel(path);
  if (!panel) return {found: false};
  const sc = panel.sessionContext;
  const kernel = sc && sc.session && sc.session.kernel;
  const st = {found: true, ready: panel.context.isReady && sc.isReady,
              kernel: kernel ? kernel.status : null, kernelName: kernel ? kernel.name : null,
              code: 0, executed: 0, pending: 0, errors: [], counts: []};
  panel.content.widgets.forEach((cell, i) => {
    if (cell.model.type !== 'code') return;
    if (cell.model.sharedModel.getSource().trim() === '') return;
    st.code += 1;
    const n = cell.model.executionCount;
    st.counts.push(n);
    if (n !== null && n !== undefined) st.executed += 1;
    const prompt = cell.node.querySelector('.jp-InputPrompt');
    if (prompt && prompt.textContent.includes('*')) st.pending += 1;
    const outs = cell.model.outputs;
    for (let j = 0; j < outs.length; j++) {
      const o = outs.get(j).toJSON();
      if (o.output_type === 'error')
        st.errors.push({cell: i, ename: o.ename, evalue: o.evalue,
                        traceback: (o.traceback || []).join('\n').replace(/\x1b\[[0-9;]*m/g, '')});
    }
  });
  return st;
}
