// The element with the focus: its data-browser-test-kbd tag (null outside the tagged parts) and
// how it looks. With `blurTag`, the look of that part once the focus has left it (for comparison).
// `outline` is the site's criterion (tests/site/test_accessibility.py): an outline of at least
// 2 px that is not transparent.
([blurTag]) => {
  let e = document.activeElement;
  if (blurTag !== null) {
    e = document.querySelector(`[data-browser-test-kbd="${blurTag}"]`);
    if (document.activeElement === e) e.blur();
  }
  if (!e || e === document.body) return {tag: null, what: 'body', outline: false, look: ''};
  const s = getComputedStyle(e);
  const cls = typeof e.className === 'string' && e.className ? '.' + e.className.split(' ')[0] : '';
  return {tag: e.getAttribute('data-browser-test-kbd'),
          what: e.tagName.toLowerCase() + cls,
          outline: s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2
                   && !/rgba\([^)]*, 0\)|transparent/.test(s.outlineColor),
          look: [s.outlineStyle, s.outlineWidth, s.outlineColor, s.boxShadow, s.borderColor,
                 s.backgroundColor].join(' | ')};
}
