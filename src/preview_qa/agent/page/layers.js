// What lies over and behind a text, for the rule of agent/page/shown.js: whether something covers it where a person
// would look, and whether it stands out from its background. One expression, a factory: `(FACTORY)(helpers)` with the
// rule's `parentOf` and `named` returns the functions; shown.js calls it once.
//
// Covered: a few points of the text's boxes are hit-tested in its own document (or shadow root). A point counts when
// the topmost element there is the text's element (or inside it or around it); an element above it that paints
// nothing there (no background of half opacity or more, no image; pointer-events: none is never hit) is seen through.
// Text out of view, or covered by something pinned (fixed or sticky) on a page that scrolls, is judged where it would
// stand scrolled to the middle of the viewport: there only something pinned covers it (a dialog over the whole
// viewport does, a sticky header or a bottom banner does not). Behind a modal <dialog> the page is inert and not hit:
// the dialog's box and its ::backdrop are compared by their geometry. Text that is itself pointer-events: none cannot
// be hit-tested at all and is taken as uncovered.
//
// Unreadable: the text's colour against the first background behind it (its ancestors' background colours, composed;
// an image or gradient there, a text shadow or stroke: readable) with a contrast under 1.5:1. Where a positioned box
// lets something else show behind the text (a heading over a sibling <img>), the points in view ask what really is.
((helpers) => {
  const {parentOf, named} = helpers;
  const MIN_CONTRAST = 1.5;  // WCAG's ratio; 1:1 is the same colour, 4.5:1 the body-text minimum
  const PAINT_ALPHA = 0.5;  // a background at least this opaque hides what is under it; a lighter tint is seen through
  const MAX_POINTS = 8;  // points hit-tested for one text
  const MEDIA = new Set(["img", "video", "canvas", "svg", "picture", "iframe", "object", "embed"]);
  const DIALOG = "dialog, [role=dialog], [role=alertdialog], [aria-modal=true]";
  const LABEL = 60;  // characters of a cover's text in a reason

  let paint = null;
  const colours = new Map();
  // Any CSS colour (rgb, hsl, oklch, color(...), a keyword) as [r, g, b, a] (0-255, a 0-1), by painting it once.
  const rgba = (css) => {
    if (css === "rgba(0, 0, 0, 0)" || css === "transparent") return [0, 0, 0, 0];
    let c = colours.get(css);
    if (c) return c;
    const m = /^rgba?\((\d+), (\d+), (\d+)(?:, ([\d.]+))?\)$/.exec(css);
    if (m) c = [+m[1], +m[2], +m[3], m[4] === undefined ? 1 : +m[4]];
    else {
      try {
        paint = paint || new OffscreenCanvas(1, 1).getContext("2d", {willReadFrequently: true});
        paint.clearRect(0, 0, 1, 1);
        paint.fillStyle = "#000"; paint.fillStyle = css; paint.fillRect(0, 0, 1, 1);
        const d = paint.getImageData(0, 0, 1, 1).data;
        c = [d[0], d[1], d[2], d[3] / 255];
      } catch (e) { c = null; }
    }
    if (colours.size < 500) colours.set(css, c);
    return c;
  };
  const over = (top, under) => top[3] >= 1 ? top.slice(0, 3) : [0, 1, 2].map((i) => top[i] * top[3] + under[i] * (1 - top[3]));
  const luminance = (c) => {
    const [r, g, b] = c.map((v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const contrast = (a, b) => { const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const colourName = (c) => c.every((v) => v >= 235) ? "white" : c.every((v) => v <= 25) ? "black"
    : `rgb(${c.map(Math.round).join(", ")})`;
  // The canvas behind everything: white, or Chromium's dark one for a page that asks for dark only. Read once a walk.
  let canvasCache = null;
  const canvas = () => {
    if (!canvasCache) {
      const scheme = getComputedStyle(document.documentElement).colorScheme || "";
      canvasCache = /dark/.test(scheme) && !/light/.test(scheme) ? [18, 18, 18] : [255, 255, 255];
    }
    return canvasCache;
  };

  // The background an element gives its content, given its parent's (`under`: [r, g, b], "image", or null for the
  // canvas), and whether what shows behind its content may be something other than its ancestors' backgrounds.
  const background = (under, loose, el, s) => {
    if (s.backgroundImage !== "none") return {bg: "image", loose: false};
    const own = rgba(s.backgroundColor);
    if (own && own[3] > 0) return {bg: under === "image" ? "image" : over(own, under || canvas()), loose: false};
    const placed = s.position === "absolute" || s.position === "fixed";
    return {bg: under, loose: loose || placed};
  };
  // Why text with style `s` on background `bg` cannot be read ("" if it can); `points`: where it is in view, to ask
  // what is really behind it when its box is placed over something other than its ancestors.
  const readable = new Map();  // "fill|background" -> whether that pair reads (most of a page's text shares a few)
  const unreadable = (el, s, bg, loose, points) => {
    if (bg === "image") return "";
    const css = s.webkitTextFillColor, fill = rgba(css);
    let back = bg || canvas();
    if (!fill) return "";
    const key = `${css}|${back}`;
    if (!readable.has(key)) readable.set(key, contrast(over(fill, back), back) >= MIN_CONTRAST);
    if (readable.get(key)) return "";
    if (s.textShadow !== "none" || parseFloat(s.webkitTextStrokeWidth || "0") > 0) return "";
    const inView = points();
    if (loose || inView.length) {
      if (!inView.length) return "";  // out of view over what may be a picture: not known, taken as readable
      back = behind(el, inView[0]);
      if (back === "image" || contrast(over(fill, back), back) >= MIN_CONTRAST) return "";
    }
    const ratio = contrast(over(fill, back), back);
    return `unreadable, ${colourName(over(fill, back))} on ${colourName(back)} (contrast ${ratio.toFixed(2)}:1)`;
  };
  // What paints behind element `el` at point `p`: the first element under it there with an image or a background.
  const behind = (el, [x, y]) => {
    const stack = rootOf(el).elementsFromPoint(x, y);
    let back = null, i = stack.findIndex((e) => within(el, e));
    for (i = i < 0 ? 0 : i; i < stack.length; i++) {
      const e = stack[i];
      if (within(el, e)) continue;
      if (MEDIA.has(e.localName)) return "image";
      const s = getComputedStyle(e);
      if (s.backgroundImage !== "none") return "image";
      const c = rgba(s.backgroundColor);
      if (c && c[3] > 0) { back = back ? back : c; if (c[3] >= 1) break; }
    }
    return back ? over(back, canvas()) : canvas();
  };

  const rootOf = (el) => { const r = el.getRootNode(); return r && r.elementsFromPoint ? r : document; };
  const within = (outer, inner) => { for (let a = inner; a; a = parentOf(a)) if (a === outer) return true; return false; };
  const pinned = (el) => {
    for (let a = el, n = 0; a && n < 40; a = parentOf(a), n++) {
      const p = getComputedStyle(a).position;
      if (p === "fixed" || p === "sticky") return true;
    }
    return false;
  };
  const paints = (e) => {
    if (MEDIA.has(e.localName)) return true;
    const s = getComputedStyle(e);
    if (s.backgroundImage !== "none" || (s.backdropFilter && s.backdropFilter !== "none")) return true;
    const c = rgba(s.backgroundColor);
    return !!c && c[3] * parseFloat(s.opacity) >= PAINT_ALPHA;
  };
  const inBox = (r, x, y) => x >= r.left && x < r.right && y >= r.top && y < r.bottom;
  // The modal <dialog> open in the top layer, if any (the page behind it is inert: not hit-tested).
  let modalCache;
  const modal = () => {
    if (modalCache === undefined) { try { modalCache = document.querySelector("dialog:modal"); } catch (e) { modalCache = null; } }
    return modalCache;
  };
  // What covers `el` at (x, y): null when it is on top there, else the element over it.
  const coverAt = (el, x, y) => {
    const dialog = modal();
    if (dialog && !within(dialog, el)) {
      if (inBox(dialog.getBoundingClientRect(), x, y)) return dialog;
      const b = getComputedStyle(dialog, "::backdrop"), c = rgba(b.backgroundColor);
      return (c && c[3] >= PAINT_ALPHA) || (b.backdropFilter && b.backdropFilter !== "none") ? dialog : null;
    }
    const root = rootOf(el), top = root.elementFromPoint(x, y);
    if (!top || within(el, top)) return null;
    for (const e of root.elementsFromPoint(x, y)) {
      if (within(el, e) || within(e, el)) return null;  // its own element, or one around it with nothing over it
      if (paints(e)) return e;
    }
    return null;
  };
  // What covers `el` where it would stand scrolled to the middle of the viewport, at x: only something pinned (what
  // is pinned there is the same for every text of a walk, looked up once a 16 px column).
  let midCache = new Map();
  const coverMid = (el, x) => {
    const y = innerHeight / 2, dialog = modal();
    if (dialog) return coverAt(el, x, y);
    const column = Math.floor(x / 16);
    if (!midCache.has(column)) {
      let found = null;
      for (const e of document.elementsFromPoint(column * 16 + 8, y)) {
        if (!pinned(e)) break;
        if (paints(e)) { found = e; break; }
      }
      midCache.set(column, found);
    }
    const cover = midCache.get(column);
    return cover && !within(cover, el) ? cover : null;
  };
  const scrolls = () => {
    const s = document.scrollingElement || document.documentElement;
    const hidden = [document.documentElement, document.body].some((e) => e && getComputedStyle(e).overflowY === "hidden");
    return !hidden && s.scrollHeight > innerHeight + 1;
  };
  const label = (e) => {
    const text = (e.innerText || e.getAttribute("aria-label") || "").trim().split("\n")[0].trim();
    return text ? ` (${JSON.stringify(text.length > LABEL ? text.slice(0, LABEL - 1) + "…" : text).replace(/^"|"$/g, "'")})` : "";
  };
  let described = new Map();  // a walk's covers, named once (a dialog over the page covers every line of it)
  const describe = (e) => {
    if (!described.has(e)) {
      const dialog = e.closest && e.closest(DIALOG);
      described.set(e, dialog ? `a dialog${label(dialog)}` : `${/^[aeiou]/.test(e.localName) ? "an" : "a"} ${named(e)}${label(e)}`);
    }
    return described.get(e);
  };

  // The points to hit-test for text in `boxes` (each {rect, el, view}: a box of it, its element, the box it can be
  // scrolled within), as [x, y, el] in view; and where each box is out of view, its middle's x.
  const pointsOf = (boxes) => {
    const inView = [], away = [];
    for (const {rect: r, el, view} of boxes) {
      if (r.right - r.left < 1 || r.bottom - r.top < 1) continue;
      const y = (r.top + r.bottom) / 2;
      const xs = r.right - r.left > 60 ? [0.2, 0.5, 0.8] : [0.5];
      for (const f of xs) {
        const x = r.left + f * (r.right - r.left);
        const shown = x >= 0 && y >= 0 && x < innerWidth && y < innerHeight && (!view || inBox(view, x, y));
        (shown ? inView : away).push([x, y, el]);
      }
      if (inView.length + away.length >= MAX_POINTS) break;
    }
    return {inView, away};
  };
  // A new walk: the page may have changed since the last.
  const fresh = () => { modalCache = undefined; canvasCache = null; midCache = new Map(); described = new Map(); };
  // Why none of the text in `boxes` is on top where a person looks ("" if some of it is).
  const covered = (boxes) => {
    if (!boxes.length) return "";
    const {inView, away} = pointsOf(boxes);
    let cover = null;
    for (const [x, y, el] of inView) {
      if (getComputedStyle(el).pointerEvents === "none") return "";
      const on = coverAt(el, x, y);
      if (!on) return "";
      cover = cover || on;
    }
    // Judged scrolled to the middle: text out of view, or under something pinned on a page that scrolls.
    const mid = away.length ? away : cover && pinned(cover) && !pinned(inView[0][2]) && scrolls() ? inView : [];
    for (const [x, , el] of mid) {
      const on = coverMid(el, Math.min(Math.max(x, 1), innerWidth - 1));
      if (!on) return "";
      cover = cover || on;
    }
    return cover ? `covered by ${describe(cover)}` : "";
  };

  // Why text of `el` out of view at x would be covered scrolled to the middle ("" if it would not): the walk's quick
  // answer for most of a long page's lines, before their boxes are measured.
  const middleWhy = (el, x) => {
    const cover = coverMid(el, Math.min(Math.max(x, 1), innerWidth - 1));
    return cover ? `covered by ${describe(cover)}` : "";
  };

  return {fresh, background, unreadable, covered, middleWhy, inBox};
})
