// Text as a person sees it: the visibility rule of the text checks, the agent's quotes and the drawn test.
// One expression, a factory of the layers' factory (agent/page/shown.py's rule() joins them): `(RULE)()` returns the
// rule's functions. It is evaluated in the page's own world for the
// checks (one Playwright call each) and in worlds of our own for what the run's pages showed (agent/page/sightings.py)
// and whether a page has drawn (agent/page/drawing.py). It defines no global of its own.
//
// Text counts where a person could see it: rendered (not display: none, visibility: hidden, closed content), not at
// opacity 0 (its own or an ancestor's), not clipped to nothing (clip: rect(0 0 0 0), clip-path: inset(50%), a box of
// 1 px or none with overflow hidden), not placed off the page's left or top edge (left: -9999px, text-indent: -9999px;
// below the fold is fine), not transparent (color: transparent, unless a background or stroke draws it), not at
// font-size 0, not unreadable against what is behind it (a contrast under 1.5:1, WCAG's formula: white on white), and
// not covered: a line counts only where some of it is on top when a person looks (both in agent/page/layers.js). A visible form
// field shows its value (or its placeholder when empty), a select its chosen option; an element's ::before and ::after
// show their string `content` in place.
//
// One walk down the page (through open shadow roots and slots, as it renders) carries what the ancestors do to their
// content (a reason it cannot be seen, the opacity so far, the box it is clipped to): each element's style is read
// once, and a text is placed by its element's box (by its own only under a negative text-indent).
((makeLayers) => {
  const MIN_OPACITY = 0.1;  // below this no one reads it: a toast fading in from 0 counts once it is legible
  const MIN_SIDE = 2;  // px: a box clipped to less than this on either side shows nothing
  const LINE_LIMIT = 2000;  // characters a line keeps
  const MAX_LINES = 5000;
  const SKIP = new Set(["script", "style", "template", "noscript", "head", "title", "meta", "link"]);
  const FRAMES = new Set(["iframe", "frame", "object", "embed"]);  // documents of their own, read there
  const FIELDS = new Set(["input", "textarea", "select"]);
  const TEXT_INPUTS = new Set(["", "text", "search", "email", "url", "tel", "number", "date", "datetime-local",
    "month", "time", "week"]);
  const BUTTON_INPUTS = new Set(["submit", "button", "reset"]);
  // Pictures text could be drawn in. Not an inline <svg>: its words are <text> (read as text), its paths icons and logos.
  const PICTURES = new Set(["img", "canvas", "video", "object", "embed"]);
  const MEDIA = new Set(["img", "svg", "canvas", "video", "iframe", "object", "embed", "input", "select", "textarea", "button"]);
  const INLINE = /^(inline|contents|ruby)/;  // display values that keep their text on the line around them
  const TOP = {why: "", opacity: 1, clip: null, absClip: null, fixed: false, bg: null, loose: false, view: null};

  const fold = (s) => String(s).replace(/\s+/g, " ").trim().toLowerCase();
  const parentOf = (node) =>
    node.assignedSlot || node.parentElement || (node.parentNode instanceof ShadowRoot ? node.parentNode.host : null);
  const named = (el) => `<${el.localName}>`;
  const round = (n) => Math.round(n * 100) / 100;
  const meet = (a, b) => (!a ? b : !b ? a : {
    left: Math.max(a.left, b.left), right: Math.min(a.right, b.right), top: Math.max(a.top, b.top),
    bottom: Math.min(a.bottom, b.bottom), what: b.what || a.what,
  });
  const box = (r) => ({left: r.left, right: r.right, top: r.top, bottom: r.bottom});
  const hides = (o) => o === "hidden" || o === "clip";
  const scrolls = (o) => o === "auto" || o === "scroll";

  const zeroClip = (s, position) => {
    if ((position === "absolute" || position === "fixed") && s.clip !== "auto") {
      const sides = (s.clip.match(/-?[\d.]+px/g) || []).map(parseFloat);  // rect(top, right, bottom, left)
      if (sides.length === 4 && (sides[1] - sides[3] < MIN_SIDE || sides[2] - sides[0] < MIN_SIDE)) return `clip: ${s.clip}`;
    }
    const path = s.clipPath;
    if (path === "none") return "";
    const inset = /^inset\(\s*([\d.]+)%(?:\s+([\d.]+)%)?/.exec(path);
    if (inset && (parseFloat(inset[1]) >= 50 || parseFloat(inset[2] || "0") >= 50)) return `clip-path: ${path}`;
    return /^circle\(\s*0(px|%)?[\s)]/.test(path) ? `clip-path: ${path}` : "";
  };
  // The padding box an element hiding its overflow clips its content to (unbounded along an axis it lets scroll).
  const paddingBox = (el, s) => {
    const r = el.getBoundingClientRect();
    const left = r.left + el.clientLeft, top = r.top + el.clientTop;
    const x = s.overflowX === "hidden" || s.overflowX === "clip", y = s.overflowY === "hidden" || s.overflowY === "clip";
    return {
      left: x ? left : -Infinity, right: x ? left + el.clientWidth : Infinity,
      top: y ? top : -Infinity, bottom: y ? top + el.clientHeight : Infinity,
      what: `a ${el.clientWidth}×${el.clientHeight} px ${named(el)} with overflow hidden`,
    };
  };
  // What an element does to everything inside it, given what its ancestors did (`ctx`): a reason it cannot be seen
  // ("" if none), the opacity so far, the box its content is clipped to (`clip`; `absClip` for absolutely placed
  // content, whose containing block may lie higher up), whether it is fixed; and `box`, the clip of its own box.
  const enter = (ctx, el, s) => {
    const position = s.position;
    const own = position === "fixed" ? null : position === "absolute" ? ctx.absClip : ctx.clip;
    if (ctx.why) return {...ctx, box: own, s};
    const top = el === document.documentElement || el === document.body;
    const at = (what) => (top ? what : on(el, what));
    const mine = parseFloat(s.opacity), opacity = ctx.opacity * mine;
    const display = s.display;
    let why = "", zero = "";
    if (display === "none") why = at("display: none");
    else if (opacity < MIN_OPACITY) why = mine < MIN_OPACITY ? at(`opacity ${round(mine)}`) : `opacity ${round(opacity)} (its ancestors')`;
    else if ((zero = zeroClip(s, position))) why = at(`clipped to nothing (${zero})`);
    let clip = own;
    const ox = s.overflowX, oy = s.overflowY;
    if (!why && !top && !INLINE.test(display) && (hides(ox) || hides(oy))) clip = meet(own, paddingBox(el, s));
    // Absolutely placed content is clipped by its containing block's clip; with no clip above, there is none to find.
    const absClip = !clip && !ctx.absClip ? null : position !== "static" || s.transform !== "none" ? clip : ctx.absClip;
    const closed = display !== "contents" && s.contentVisibility === "hidden";
    const {bg, loose} = layers.background(ctx.bg, ctx.loose, el, s);
    let view = position === "fixed" ? null : ctx.view;  // the box of the scrolling boxes it is in: the rest scrolls to
    if (!why && !top && (scrolls(ox) || scrolls(oy))) view = meet(view, box(el.getBoundingClientRect()));
    const fixed = ctx.fixed || position === "fixed";
    return {why, opacity, clip, absClip, fixed, box: own, s, display, closed, bg, loose, view, shadow: ctx.shadow};
  };
  const on = (el, what) => `${what} (on ${named(el)})`;
  const layers = makeLayers({parentOf, named});
  // What a parent does to one of its children beyond its style: closed content hides all but a closed <details>' summary.
  const child = (ctx, parent, node) => {
    if (ctx.why) return ctx;
    if (parent.localName === "details" && !parent.open && !(node.localName === "summary" && node.parentElement === parent)) {
      return {...ctx, why: "inside a closed <details>"};
    }
    return ctx.closed ? {...ctx, why: on(parent, "content-visibility: hidden")} : ctx;
  };
  // Where a box (viewport coordinates) lies: "" if a person could see some of it, else why not.
  const placed = (rect, clip, fixed) => {
    const r = clip ? meet(rect, clip) : rect;
    const small = (b) => b.right - b.left < MIN_SIDE || b.bottom - b.top < MIN_SIDE;
    if (small(r)) {
      const tiny = clip && (clip.right - clip.left < MIN_SIDE + 1 || clip.bottom - clip.top < MIN_SIDE + 1);
      return clip && (!small(rect) || tiny) ? `clipped to nothing (inside ${clip.what})` : "it has no size";
    }
    const x = fixed ? 0 : scrollX, y = fixed ? 0 : scrollY;
    if (r.right + x <= 0) return `placed outside the page, ${Math.round(-(r.left + x))} px left of it`;
    if (r.bottom + y <= 0) return `placed outside the page, ${Math.round(-(r.top + y))} px above it`;
    if ((fixed || pageClipsX()) && r.left >= innerWidth) return "placed outside the page, right of it";
    if (fixed && r.top >= innerHeight) return "placed below the window, where no scrolling reaches it";
    return "";
  };
  let clipsX = null;
  const pageClipsX = () => {
    if (clipsX === null) {
      clipsX = [document.documentElement, document.body].some((el) => {
        const o = el ? getComputedStyle(el).overflowX : "";
        return o === "hidden" || o === "clip";
      });
    }
    return clipsX;
  };
  const transparent = (el, s) => {
    const fill = s.webkitTextFillColor || s.color;
    if (!(fill === "transparent" || /^rgba\([^,]+,[^,]+,[^,]+,\s*0\)$|\/\s*0\)$/.test(fill))) return false;
    if (s.textShadow !== "none" || parseFloat(s.webkitTextStrokeWidth || "0") > 0) return false;
    for (let a = el, n = 0; a && n < 4; a = parentOf(a), n++) {  // gradient text: the background draws it
      const sa = getComputedStyle(a);
      if (sa.backgroundClip === "text" || sa.webkitBackgroundClip === "text") return false;
    }
    return true;
  };
  // Why the text inside element `el` (entered as `ctx`) cannot be seen ("" if it can); `node`: the text itself, placed
  // by its own box under a negative text-indent, else by its element's. Memoised on the context (one a element).
  const textWhy = (ctx, el, node) => {
    if (ctx.why) return ctx.why;
    if (ctx.text !== undefined && !ctx.indented) return ctx.text;
    const s = ctx.s;
    let why = "";
    if (s.visibility !== "visible") why = `visibility: ${s.visibility}`;
    else if (parseFloat(s.fontSize) < 1) why = "font-size 0";
    else if (transparent(el, s)) why = "transparent text (color: transparent)";
    ctx.indented = ctx.display === "contents" || parseFloat(s.textIndent) < 0;  // no box of its own to place it by
    if (!why) {
      let rect = ctx.rect = el.getBoundingClientRect();
      if (ctx.indented) { const range = document.createRange(); range.selectNodeContents(node); rect = range.getBoundingClientRect(); }
      why = placed(box(rect), ctx.clip, ctx.fixed) || layers.unreadable(el, s, ctx.bg, ctx.loose, () => middleIn(rect, ctx.view));
    }
    ctx.text = why;
    return why;
  };
  const boxWhy = (ctx, el) =>  // a field, a picture: the element's own box
    ctx.why || (ctx.s.visibility !== "visible" ? `visibility: ${ctx.s.visibility}` : placed(box(el.getBoundingClientRect()), ctx.box, ctx.fixed));
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
  const inView = (r) => r.bottom > 0 && r.right > 0 && r.top < innerHeight && r.left < innerWidth;
  const middleIn = (r, view) => {  // the middle of a box, if a person sees that point now ([] if not)
    const x = (r.left + r.right) / 2, y = (r.top + r.bottom) / 2;
    return x >= 0 && y >= 0 && x < innerWidth && y < innerHeight && (!view || layers.inBox(view, x, y)) ? [[x, y]] : [];
  };
  // The boxes of a line's pieces, for the cover test: a text's own boxes while its element is in view, else its
  // element's box (enough to know it is out of view); a field's or generated content's, its element's.
  const boxesOf = (pieces) => {
    const out = [], range = document.createRange();
    for (const {node, el, ctx, from, to} of pieces.slice(0, 6)) {
      const r = ctx.rect || el.getBoundingClientRect();
      if (node && inView(r)) {
        if (from === undefined) range.selectNodeContents(node);
        else { range.setStart(node, from); range.setEnd(node, to); }
        for (const rect of Array.from(range.getClientRects()).slice(0, 3)) out.push({rect, el, view: ctx.view});
      } else out.push({rect: r, el, view: ctx.view});
    }
    return out;
  };
  // The elements of the document some rule may give ::before or ::after string content (null: not known, a stylesheet
  // we may not read or a nested rule: every element is asked); read once a walk, so that only they pay for the look.
  let hosts;
  const pseudoHosts = () => {
    const selectors = [];
    const scan = (rules) => {
      for (const r of rules) {
        if (r.selectorText !== undefined) {
          if (r.cssRules && r.cssRules.length) throw new Error("nested");
          if (/:(before|after)/i.test(r.selectorText) && /["']|attr\(/.test(r.style.content)) selectors.push(r.selectorText);
        } else if (r.cssRules) scan(r.cssRules);  // @media, @supports, @layer, @container
      }
    };
    try {
      for (const sheet of [...document.styleSheets, ...(document.adoptedStyleSheets || [])]) scan(sheet.cssRules);
      const bare = selectors.flatMap((s) => s.split(",")).map((s) => s.replace(/::?(before|after)\b/gi, "").trim() || "*");
      return new Set(bare.length ? document.querySelectorAll(bare.join(",")) : []);
    } catch (e) {
      return null;
    }
  };
  // The pieces of a line (from read) that show `want` (folded), a text's cut to its words: so that a check asks
  // whether those words are on top, not some other part of their line (a toast over its start).
  const matching = (line, want) => {
    const raw = line.raw, map = [];
    let folded = "", space = true;
    for (let i = 0; i < raw.length; i++) {
      if (/\s/.test(raw[i])) {
        if (!space) { folded += " "; map.push(i); space = true; }
        continue;
      }
      space = false;
      for (const c of raw[i].toLowerCase()) { folded += c; map.push(i); }
    }
    const at = folded.indexOf(want);
    if (at < 0 || !want) return line.pieces;
    const from = map[at], to = map[at + want.length - 1] + 1;
    return line.pieces.filter((p) => p.at < to && p.at + p.len > from)
      .map((p) => (p.node ? {...p, from: Math.max(0, from - p.at), to: Math.min(p.len, to - p.at)} : p));
  };
  // Why no one sees a line for something over it ("" if some of it is on top). A line out of view is judged at the
  // middle of the viewport by its elements' boxes alone; only a line in view has its words' boxes measured.
  const coverOf = (pieces) => {
    let why = "";
    for (const {el, ctx} of pieces.slice(0, 6)) {
      const r = ctx.rect;
      if (!r || ctx.view || inView(r)) return layers.covered(boxesOf(pieces));
      const there = layers.middleWhy(el, (r.left + r.right) / 2);
      if (!there) return "";
      why = why || there;
    }
    return why;
  };
  // A pseudo-element's string content ("" if none, none shown, or no words: an icon font's glyph, a bullet).
  const generated = (el, pseudo, ctx) => {
    if (hosts === undefined) hosts = pseudoHosts();
    if (hosts && !ctx.shadow && !hosts.has(el)) return "";
    const s = getComputedStyle(el, pseudo), content = s.content;
    if (!content || content === "none" || content === "normal" || !/["']|attr\(/.test(content)) return "";
    if (s.display === "none" || s.visibility !== "visible" || parseFloat(s.opacity) < MIN_OPACITY) return "";
    if (parseFloat(s.fontSize) < 1 || transparent(el, s)) return "";
    let text = "";
    for (const m of content.matchAll(/"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|attr\(\s*([\w-]+)\s*\)/g)) {
      if (m[3]) text += el.getAttribute(m[3]) || "";
      else text += (m[1] ?? m[2]).replace(/\\([0-9a-fA-F]{1,6}) ?|\\(.)/g, (_, hex, ch) => hex ? String.fromCodePoint(parseInt(hex, 16)) : ch);
    }
    text = text.replace(/[\uE000-\uF8FF]/g, "");  // an icon font's private-use glyphs
    return /[\p{L}\p{N}]/u.test(text) ? text : "";
  };

  // One walk of `root` (a document or a shadow root): the lines a person reads, in order, each {text, tag} (tag: the
  // block or field that holds it); the lines no one sees for something over them (`covered`, each {text, why}); the
  // pictures of some size in view (`pictures`); and whether anything shows at all (`shows`: a line, or a medium of
  // some size). `limit` stops at that many lines, or (0) at the first thing shown: whether a page has drawn, which
  // asks nothing of what covers it (a consent dialog over a page that has drawn).
  const read = (root, limit = MAX_LINES) => {
    clipsX = null;
    hosts = undefined;
    layers.fresh();
    const blocks = root instanceof ShadowRoot ? [root.host.localName] : [];  // a closed root read on its own: its host
    const out = {lines: [], covered: [], cur: "", pieces: [], blocks, pictures: new Set(), shows: false};
    const add = (text, el, ctx, node = null) => {
      out.pieces.push({node, el, ctx, at: out.cur.length, len: text.length});
      out.cur += text;
    };
    const flush = () => {
      const raw = out.cur, text = raw.replace(/\s+/g, " ").trim(), pieces = out.pieces;
      out.cur = ""; out.pieces = [];
      if (!text) return;
      const why = limit === 0 ? "" : coverOf(pieces);
      if (why) { if (out.covered.length < MAX_LINES) out.covered.push({text: text.slice(0, LINE_LIMIT), why}); return; }
      out.lines.push({text: text.slice(0, LINE_LIMIT), tag: out.blocks[out.blocks.length - 1] || "body", raw, pieces});
      out.shows = true;
    };
    const done = () => (limit === 0 ? out.shows : out.lines.length >= limit);
    const walk = (node, ctx, parent) => {
      if (done()) return;
      if (node.nodeType === Node.TEXT_NODE) {
        if (!node.data.trim()) out.cur += " ";
        else if (parent && !textWhy(ctx, parent, node)) add(node.data, parent, ctx, node);
        return;
      }
      if (node.nodeType === Node.DOCUMENT_NODE || node.nodeType === Node.DOCUMENT_FRAGMENT_NODE) {
        const shadow = node instanceof ShadowRoot;  // its stylesheets are its own: every element's ::before is asked
        for (const c of node.childNodes) walk(c, shadow ? {...ctx, shadow} : ctx, shadow ? node.host : parent);
        return;
      }
      if (node.nodeType !== Node.ELEMENT_NODE) return;
      const el = node, tag = el.localName;
      if (SKIP.has(tag)) return;
      const inner = enter(parent ? child(ctx, parent, el) : ctx, el, getComputedStyle(el));
      if (inner.why) return;  // nothing inside can be seen
      if (MEDIA.has(tag) && !FIELDS.has(tag) && tag !== "button") {
        const r = el.getBoundingClientRect();
        if (r.width > 0 && r.height > 0 && !boxWhy(inner, el)) {
          out.shows = true;
          if (PICTURES.has(tag) && r.width >= 32 && r.height >= 16 && inView(r)) out.pictures.add(tag);
        }
      }
      if (FRAMES.has(tag) || tag === "canvas" || tag === "video" || tag === "img") return;
      if (tag === "br") { flush(); return; }
      if (FIELDS.has(tag)) {
        const texts = fieldTexts(el).filter((t) => t && t.trim());
        if (!boxWhy(inner, el) && (texts.length || el.getBoundingClientRect().width > 0)) out.shows = true;
        if (texts.length && !boxWhy(inner, el)) {
          flush();
          for (const t of texts) { add(t, el, inner); out.blocks.push(tag); flush(); out.blocks.pop(); }
        }
        return;
      }
      const block = !INLINE.test(inner.display);
      if (block) { flush(); out.blocks.push(tag); }
      const before = generated(el, "::before", inner), after = generated(el, "::after", inner);
      if (before && !textWhy(inner, el, el)) add(before, el, inner);
      if (el.shadowRoot) walk(el.shadowRoot, inner, el);
      else if (tag === "slot") for (const c of el.assignedNodes({flatten: true})) walk(c, inner, el);
      else for (const c of el.childNodes) walk(c, inner, el);
      if (after && !textWhy(inner, el, el)) add(after, el, inner);
      if (block) { flush(); out.blocks.pop(); }
    };
    const above = root instanceof ShadowRoot ? root.host : root.nodeType === Node.ELEMENT_NODE ? parentOf(root) : null;
    walk(root, above ? contextOf(above) : TOP, above);
    flush();
    const pictures = Array.from(out.pictures).sort();
    return {lines: out.lines.slice(0, limit || MAX_LINES), covered: out.covered, pictures, shows: out.shows};
  };
  const lines = (root, limit = MAX_LINES) => read(root, limit).lines;
  const shows = (root) => read(root, 0).shows;
  // An element's context as the walk would reach it: entered from the top of the page down to it.
  const contextOf = (el) => {
    const path = [];
    for (let a = el; a; a = parentOf(a)) path.unshift(a);
    let ctx = TOP;
    for (let i = 0; i < path.length; i++) ctx = enter(i ? child(ctx, path[i - 1], path[i]) : ctx, path[i], getComputedStyle(path[i]));
    return ctx;
  };

  // For a text that shows nowhere: the deepest element (or field) that holds it, and why no one can see it there.
  const explain = (text) => {
    clipsX = null;
    const want = fold(text);
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
          return type === "password" || type === "hidden" ? `it is the value of a ${type} field` : boxWhy(contextOf(el), el) || "";
        }
      }
    }
    for (const root of roots) {
      let el = root === document ? document.body : Array.from(root.children).find(holds) || null;
      if (!el || !holds(el)) continue;
      for (let inner = Array.from(el.children).find(holds); inner; inner = Array.from(el.children).find(holds)) el = inner;
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const parent = node.parentElement;
        if (!node.data.trim() || !parent || SKIP.has(parent.localName)) continue;
        const why = textWhy(contextOf(parent), parent, node);
        if (why) return why;
      }
      return "its words are not on one line of the page";
    }
    return null;
  };

  // A text check in this frame (or in `root`: a closed shadow root handed over by DevTools), waiting in the page (one
  // call): resolves once the text is shown (`shown`) or nowhere
  // (not `shown`), or `waitMs` has passed; with what it found. Polls every `pollMs`, or less often on a page whose read
  // takes long (a 7 500-element table: about 0.1 s), so that a check never keeps a core busy.
  const check = async ({text, shown, waitMs, pollMs}, root = document) => {
    const want = fold(text);
    const start = performance.now();
    for (;;) {
      const t0 = performance.now();
      const seen = root !== document || document.documentElement ? read(root) : {lines: [], covered: []}, all = seen.lines;
      const cost = performance.now() - t0;
      const matches = all.filter((l) => fold(l.text).includes(want));
      let under = "";  // why the words themselves are covered, in every line that holds them
      const hit = matches.find((l) => {
        const why = layers.covered(boxesOf(matching(l, want)));
        under = under || why;
        return !why;
      });
      const done = performance.now() - start >= waitMs;
      if (!!hit === shown || done) {
        return {
          ok: !!hit === shown,
          waited: (performance.now() - start) / 1000,
          hit: hit ? {text: hit.text, tag: hit.tag, count: matches.length} : null,
          why: hit || !shown ? null : under || (seen.covered.find((l) => fold(l.text).includes(want)) || {}).why || explain(text),
          lines: hit ? [] : all.map((l) => l.text),
        };
      }
      await new Promise((r) => setTimeout(r, Math.max(pollMs, 2 * cost)));
    }
  };

  return {read, lines, shows, explain, check, fold};
})
