// A document and every open shadow root in it, watched as one: the watchers of our own worlds (agent/page/drawing.py,
// agent/page/sightings.py) see what a page draws inside shadow roots (a Panel or Bokeh app's widgets, a web component).
// One expression, a factory: `(FACTORY)(onChange, options)` observes `document` with `options` and returns `sweep`;
// `sweep.roots()` lists the open shadow roots found so far whose host is in the document (the busy read's, drawing.py).
//
// All of it runs in our world, where the page's scripts can neither see it nor feed it. A shadow root is found where it
// can be: in each subtree the page adds (a Bokeh view's host arrives with its root attached), and by `sweep`, which
// walks the document and its open roots for one attached to a host already in the page (a custom element upgraded
// late, declarative shadow DOM) and says whether it found one. A closed shadow root stays out of sight, as it is of
// every check. Wrapping the page world's attachShadow would tell of a late root at once, but the page could see the
// wrapper, and remove or replace it; a sweep at each look of ours costs one walk (2.6 ms for 12 500 elements) and is
// taken less often on a page whose walk is long.
(onChange, options) => {
  const SWEEP_MS = 200;  // at most this often, or 20 times the last sweep's cost
  const watched = new WeakSet();
  const known = new Set();  // the open roots found, for `sweep.roots()`; one whose host left the page is dropped there
  let lastSweep = -Infinity, sweepCost = 0;
  const observer = new MutationObserver((records) => {
    for (const record of records) for (const node of record.addedNodes) if (node.nodeType === Node.ELEMENT_NODE) within(node);
    onChange(records);
  });
  const observe = (root) => {
    if (watched.has(root)) return false;
    watched.add(root);
    observer.observe(root, options);
    return true;
  };
  // `node`, its subtree and the open shadow roots in it, down every level: true when one was not watched yet.
  const within = (node) => {
    let found = false;
    const roots = [];
    const visit = (el) => {
      if (el.shadowRoot) {
        known.add(el.shadowRoot);
        found = observe(el.shadowRoot) || found;
        roots.push(el.shadowRoot);
      }
    };
    if (node.nodeType === Node.ELEMENT_NODE) visit(node);
    if (node.querySelectorAll) for (const el of node.querySelectorAll("*")) visit(el);
    for (let i = 0; i < roots.length; i++) for (const el of roots[i].querySelectorAll("*")) visit(el);
    return found;
  };
  const sweep = () => {
    const t0 = performance.now();
    if (t0 - lastSweep < Math.max(SWEEP_MS, 20 * sweepCost)) return false;
    const found = within(document);
    lastSweep = performance.now();
    sweepCost = lastSweep - t0;
    return found;
  };
  sweep.roots = () => {
    for (const root of known) if (!root.host.isConnected) known.delete(root);  // found again by a later sweep if it returns
    return Array.from(known);
  };
  observe(document);
  within(document);
  return sweep;
}
