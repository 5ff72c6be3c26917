// Text as a person sees it: the visibility rule of the text checks, the agent's quotes and the drawn test.
// One expression, a factory: `(FACTORY)()` returns the rule's functions. It is evaluated in the page's own world for the
// checks (one Playwright call each) and in worlds of our own for what the run's pages showed (agent/page/sightings.py)
// and whether a page has drawn (agent/page/drawing.py). It defines no global of its own.
//
// Text counts where a person could see it: rendered (not display: none, visibility: hidden, closed content), not at
// opacity 0 (its own or an ancestor's), not clipped to nothing (clip: rect(0 0 0 0), clip-path: inset(50%), a box of
// 1 px or none with overflow hidden), not placed off the page's left or top edge (left: -9999px, text-indent: -9999px;
// below the fold is fine), not transparent (color: transparent, unless a background or stroke draws it) and not at
// font-size 0. A visible form field shows its value (or its placeholder when empty), a select its chosen option.
(() => {
  const MIN_OPACITY = 0.1;  // below this no one reads it: a toast fading in from 0 counts once it is legible
  const MIN_SIDE = 2;  // px: a box clipped to less than this on either side shows nothing
  const LINE_LIMIT = 2000;  // characters a line keeps
  const MAX_LINES = 5000;
  const SKIP = new Set(["script", "style", "template", "noscript", "head", "title", "meta", "link"]);
  const FRAMES = new Set(["iframe", "frame", "object", "embed"]);  // documents of their own, read there
  const TEXT_INPUTS = new Set(["", "text", "search", "email", "url", "tel", "number", "date", "datetime-local",
    "month", "time", "week"]);
  const BUTTON_INPUTS = new Set(["submit", "button", "reset"]);
  const PICTURES = "img,canvas,video,svg,picture,object,embed";
  const MEDIA = "img,svg,canvas,video,iframe,object,embed,input,select,textarea,button";
  const INLINE = /^(inline|contents|ruby)/;  // display values that keep their text on the line around them

  const fold = (s) => String(s).replace(/\s+/g, " ").trim().toLowerCase();
  const parentOf = (node) =>
    node.assignedSlot || node.parentElement || (node.parentNode instanceof ShadowRoot ? node.parentNode.host : null);
  const named = (el) => `<${el.localName}>`;

  // One pass over a document: computed styles and the rule's verdicts, memoised per element.
  const newPass = () => ({styles: new Map(), chains: new Map(), clips: new Map(), roots: []});
  const style = (p, el) => {
    let s = p.styles.get(el);
    if (!s) { s = getComputedStyle(el); p.styles.set(el, s); }
    return s;
  };
  const round = (n) => Math.round(n * 100) / 100;
  const zeroClip = (s) => {
    if ((s.position === "absolute" || s.position === "fixed") && s.clip && s.clip !== "auto") {
      const sides = (s.clip.match(/-?[\d.]+px/g) || []).map(parseFloat);  // rect(top, right, bottom, left)
      if (sides.length === 4 && (sides[1] - sides[3] < MIN_SIDE || sides[2] - sides[0] < MIN_SIDE)) return `clip: ${s.clip}`;
    }
    const inset = /^inset\(\s*([\d.]+)%(?:\s+([\d.]+)%)?/.exec(s.clipPath || "");
    if (inset && (parseFloat(inset[1]) >= 50 || parseFloat(inset[2] || "0") >= 50)) return `clip-path: ${s.clipPath}`;
    if (/^circle\(\s*0(px|%)?[\s)]/.test(s.clipPath || "")) return `clip-path: ${s.clipPath}`;
    return "";
  };
  // What an element and its ancestors do to everything inside it: a reason it cannot be seen ("" if none of them
  // hides it), and the opacity they multiply to.
  const chain = (p, el) => {
    let c = p.chains.get(el);
    if (c) return c;
    const parent = parentOf(el);
    const up = parent ? chain(p, parent) : {why: "", opacity: 1, fixed: false};
    const s = style(p, el);
    let why = up.why, opacity = up.opacity;
    const on = (what) => (el.localName === "html" || el.localName === "body" ? what : `${what} (on ${named(el)})`);
    if (!why) {
      opacity *= parseFloat(s.opacity);
      if (s.display === "none") why = on("display: none");
      else if (opacity < MIN_OPACITY) why = parseFloat(s.opacity) < MIN_OPACITY ? on(`opacity ${round(parseFloat(s.opacity))}`) : `opacity ${round(opacity)} (its ancestors')`;
      else if (zeroClip(s)) why = on(`clipped to nothing (${zeroClip(s)})`);
    }
    c = {why, opacity, fixed: up.fixed || s.position === "fixed"};
    p.chains.set(el, c);
    return c;
  };
  const clipsContent = (s) =>
    !INLINE.test(s.display) && [s.overflowX, s.overflowY].some((o) => o === "hidden" || o === "clip");
  const paddingBox = (el, s) => {
    const r = el.getBoundingClientRect();
    const left = r.left + el.clientLeft, top = r.top + el.clientTop;
    const clipX = s.overflowX === "hidden" || s.overflowX === "clip", clipY = s.overflowY === "hidden" || s.overflowY === "clip";
    return {
      left: clipX ? left : -Infinity, right: clipX ? left + el.clientWidth : Infinity,
      top: clipY ? top : -Infinity, bottom: clipY ? top + el.clientHeight : Infinity,
      what: `a ${el.clientWidth}×${el.clientHeight} px ${named(el)} with overflow hidden`,
    };
  };
  const meet = (a, b) => (!a ? b : !b ? a : {
    left: Math.max(a.left, b.left), right: Math.min(a.right, b.right), top: Math.max(a.top, b.top),
    bottom: Math.min(a.bottom, b.bottom), what: b.right - b.left <= a.right - a.left || b.bottom - b.top <= a.bottom - a.top ? b.what : a.what,
  });
  // The clip an element's box lies in (null: none), from the boxes of its containing blocks that hide their overflow;
  // the root's own overflow is the page's, judged by where the text lies on the page instead.
  const clipOf = (p, el) => {
    if (p.clips.has(el)) return p.clips.get(el);
    const s = style(p, el);
    let anc = s.position === "fixed" ? null : parentOf(el);
    if (s.position === "absolute") {
      while (anc && style(p, anc).position === "static" && style(p, anc).transform === "none") anc = parentOf(anc);
    }
    const clip = anc ? contentClip(p, anc) : null;
    p.clips.set(el, clip);
    return clip;
  };
  const contentClip = (p, el) => {
    const clip = clipOf(p, el);
    const s = style(p, el);
    if (el.localName === "html" || el.localName === "body" || !clipsContent(s)) return clip;
    return meet(clip, paddingBox(el, s));
  };
  const rendered = (p, el) => {  // a box of its own, outside closed content (<details>, content-visibility: hidden)
    let box = el;
    while (box && style(p, box).display === "contents") box = parentOf(box);
    return !box || box.checkVisibility();
  };
  const transparent = (p, el, s) => {
    const fill = s.webkitTextFillColor || s.color;
    if (!(fill === "transparent" || /^rgba\([^,]+,[^,]+,[^,]+,\s*0\)$|\/\s*0\)$/.test(fill))) return false;
    if (s.textShadow !== "none" || parseFloat(s.webkitTextStrokeWidth || "0") > 0) return false;
    for (let a = el, n = 0; a && n < 4; a = parentOf(a), n++) {  // gradient text: the background draws it
      const sa = style(p, a);
      if (sa.backgroundClip === "text" || sa.webkitBackgroundClip === "text") return false;
    }
    return true;
  };
  // Where a box (in viewport coordinates) lies: "" if a person could see some of it, else why not.
  const placed = (p, rect, clip, fixed) => {
    const r = clip ? meet(rect, clip) : rect;
    if (r.right - r.left < MIN_SIDE || r.bottom - r.top < MIN_SIDE) {
      return clip && (clip.right - clip.left < MIN_SIDE + 1 || clip.bottom - clip.top < MIN_SIDE + 1 || rect.right - rect.left >= MIN_SIDE)
        ? `clipped to nothing (inside ${clip.what})` : "it has no size";
    }
    const x = fixed ? 0 : scrollX, y = fixed ? 0 : scrollY;
    if (r.right + x <= 0) return `placed outside the page, ${Math.round(-(r.left + x))} px left of it`;
    if (r.bottom + y <= 0) return `placed outside the page, ${Math.round(-(r.top + y))} px above it`;
    const root = document.documentElement ? style(p, document.documentElement) : null;
    const body = document.body ? style(p, document.body) : null;
    const noScrollX = [root, body].some((s) => s && (s.overflowX === "hidden" || s.overflowX === "clip"));
    if ((fixed || noScrollX) && r.left >= innerWidth) return "placed outside the page, right of it";
    if (fixed && r.top >= innerHeight) return "placed below the window, where no scrolling reaches it";
    return "";
  };
  const box = (r) => ({left: r.left, right: r.right, top: r.top, bottom: r.bottom});
  // Why a text node cannot be seen ("" if it can).
  const textHidden = (p, node) => {
    const el = node.parentElement || (node.parentNode instanceof ShadowRoot ? node.parentNode.host : null);
    if (!el) return "it is not in the page";
    const c = chain(p, el);
    if (c.why) return c.why;
    if (!rendered(p, el)) return "not rendered (inside display: none or closed content)";
    const s = style(p, el);
    if (s.visibility !== "visible") return `visibility: ${s.visibility}`;
    if (parseFloat(s.fontSize) < 1) return "font-size 0";
    if (transparent(p, el, s)) return "transparent text (color: transparent)";
    const range = document.createRange();
    range.selectNodeContents(node);
    return placed(p, box(range.getBoundingClientRect()), contentClip(p, el), c.fixed);
  };
  const boxHidden = (p, el) => {  // a field, a picture: the element's own box
    const c = chain(p, el);
    if (c.why) return c.why;
    if (!rendered(p, el)) return "not rendered (inside display: none or closed content)";
    const s = style(p, el);
    if (s.visibility !== "visible") return `visibility: ${s.visibility}`;
    return placed(p, box(el.getBoundingClientRect()), clipOf(p, el), c.fixed);
  };
  const fieldTexts = (el) => {
    if (el.localName === "select") {
      const options = el.multiple || el.size > 1 ? Array.from(el.options) : Array.from(el.selectedOptions).slice(0, 1);
      return options.map((o) => o.text);
    }
    if (el.localName === "textarea") return [el.value || el.placeholder];
    const type = (el.getAttribute("type") || "").toLowerCase();
    if (BUTTON_INPUTS.has(type)) return [el.value];
    return TEXT_INPUTS.has(type) ? [el.value || el.placeholder] : [];
  };

  // The lines a person reads in `root` (a document or a shadow root), in order: each {text, tag} where tag names the
  // block (or field) that holds it. `limit` stops early (the drawn test needs one).
  const lines = (root, limit = MAX_LINES, p = newPass()) => {
    const out = {lines: [], cur: "", blocks: [], limit};
    const flush = () => {
      const text = out.cur.replace(/\s+/g, " ").trim();
      out.cur = "";
      if (text) out.lines.push({text: text.slice(0, LINE_LIMIT), tag: out.blocks[out.blocks.length - 1] || "body"});
    };
    const full = () => out.lines.length >= out.limit;
    const walk = (node) => {
      if (full()) return;
      if (node.nodeType === Node.TEXT_NODE) {
        if (!node.data.trim()) out.cur += " ";
        else if (!textHidden(p, node)) out.cur += node.data;
        return;
      }
      if (node.nodeType === Node.DOCUMENT_NODE || node.nodeType === Node.DOCUMENT_FRAGMENT_NODE) {
        if (node instanceof ShadowRoot) p.roots.push(node);
        for (const child of node.childNodes) walk(child);
        return;
      }
      if (node.nodeType !== Node.ELEMENT_NODE) return;
      const el = node, tag = el.localName;
      if (SKIP.has(tag) || FRAMES.has(tag)) return;
      if (tag === "br") { flush(); return; }
      if (tag === "input" || tag === "textarea" || tag === "select") {
        const texts = fieldTexts(el).filter((t) => t && t.trim());
        if (texts.length && !boxHidden(p, el)) {
          flush();
          for (const t of texts) { out.cur = t; out.blocks.push(tag); flush(); out.blocks.pop(); }
        }
        return;
      }
      const s = style(p, el);
      if (s.display === "none" || chain(p, el).why) return;  // nothing inside can be seen
      const block = !INLINE.test(s.display);
      if (block) { flush(); out.blocks.push(tag); }
      if (el.shadowRoot) walk(el.shadowRoot);
      else if (tag === "slot") for (const child of el.assignedNodes({flatten: true})) walk(child);
      else for (const child of el.childNodes) walk(child);
      if (block) { flush(); out.blocks.pop(); }
    };
    walk(root);
    flush();
    return out.lines.slice(0, out.limit);
  };

  // The pictures a person sees in the window (large enough to hold text): text read off them is no text of the page.
  const pictures = (p = newPass()) => {
    const found = new Set();
    for (const root of [document, ...p.roots]) {
      for (const el of root.querySelectorAll(PICTURES)) {
        const r = el.getBoundingClientRect();
        if (r.width < 32 || r.height < 16 || r.bottom <= 0 || r.right <= 0 || r.top >= innerHeight || r.left >= innerWidth) continue;
        if ((el.parentElement && el.parentElement.closest("svg")) || boxHidden(p, el)) continue;
        found.add(el.localName === "picture" ? "img" : el.localName);
      }
    }
    return Array.from(found).sort();
  };

  // Whether `root` shows anything at all: text a person reads, or a picture, field, frame... of some size.
  const shows = (root) => {
    const p = newPass();
    if (lines(root, 1, p).length) return true;
    const roots = [root];
    for (let i = 0; i < roots.length; i++) {
      for (const el of roots[i].querySelectorAll("*")) {
        if (el.shadowRoot) roots.push(el.shadowRoot);
        if (el.matches(MEDIA)) {
          const r = el.getBoundingClientRect();
          if (r.width > 0 && r.height > 0 && !boxHidden(p, el)) return true;
        }
      }
    }
    return false;
  };

  // For a text that shows nowhere: the deepest element (or field) that holds it, and why no one can see it there.
  const explain = (text) => {
    const want = fold(text);
    const p = newPass();
    const textOf = (el) => {  // its text outside <script>, <style>... (a script's source is no text of the page)
      const skip = {acceptNode: (n) => (SKIP.has(n.localName) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT)};
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT, skip);
      let all = "";
      for (let node = walker.nextNode(); node; node = walker.nextNode()) if (node.nodeType === Node.TEXT_NODE) all += node.data;
      return all;
    };
    const holds = (el) => !SKIP.has(el.localName) && fold(textOf(el)).includes(want);
    const roots = [document];
    for (let i = 0; i < roots.length; i++) {
      for (const el of roots[i].querySelectorAll("*")) {
        if (el.shadowRoot) roots.push(el.shadowRoot);
        if ((el.localName === "input" || el.localName === "textarea") && fold(el.value || el.placeholder || "").includes(want)) {
          const type = (el.getAttribute("type") || "").toLowerCase();
          return type === "password" || type === "hidden" ? `it is the value of a ${type} field` : boxHidden(p, el) || "";
        }
      }
    }
    for (const root of roots) {
      let el = root === document ? document.body : null;
      if (root !== document) el = Array.from(root.children).find(holds) || null;
      if (!el || !holds(el)) continue;
      for (let inner = Array.from(el.children).find(holds); inner; inner = Array.from(el.children).find(holds)) el = inner;
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      let why = "";
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        if (node.data.trim() && !SKIP.has(node.parentElement && node.parentElement.localName) && (why = textHidden(p, node))) break;
      }
      return why || "its words are not on one line of the page";
    }
    return null;
  };

  // A text check in this frame, waiting in the page (one call): resolves once the text is shown (`shown`) or nowhere
  // (not `shown`), or `waitMs` has passed; with what it found. Polls every `pollMs`.
  const check = async ({text, shown, waitMs, pollMs}) => {
    const want = fold(text);
    const start = performance.now();
    for (;;) {
      const all = document.documentElement ? lines(document) : [];
      const hit = all.find((l) => fold(l.text).includes(want));
      const done = performance.now() - start >= waitMs;
      if (!!hit === shown || done) {
        return {
          ok: !!hit === shown,
          waited: (performance.now() - start) / 1000,
          hit: hit ? {text: hit.text, tag: hit.tag, count: all.filter((l) => fold(l.text).includes(want)).length} : null,
          why: hit || !shown ? null : explain(text),
          lines: hit ? [] : all.map((l) => l.text),
        };
      }
      await new Promise((r) => setTimeout(r, pollMs));
    }
  };

  return {lines, pictures, shows, explain, check, fold, newPass};
})
