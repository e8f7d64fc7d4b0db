// Evaluated in every page by tests/docs/test_browser.py after the load event: waits for MathJax
// (when the page loads it), then reports what a reader would see. Returns a JSON-able object.
(async () => {
  const report = {title: document.title, mathjax: null, mathjaxSrc: null};
  const mj = document.querySelector('script[src*="mathjax"]');
  if (mj) {
    report.mathjaxSrc = mj.src;
    // the load event has fired, so a deferred MathJax has run; a short grace covers slow startup
    const deadline = Date.now() + 3000;
    while (!(window.MathJax && MathJax.startup && MathJax.startup.promise) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
      await Promise.race([MathJax.startup.promise, new Promise((r) => setTimeout(r, 30000))]);
      report.mathjax = MathJax.version || null;
    }
  }
  // math that Sphinx marked but MathJax did not typeset, and MathJax's own errors
  const math = [...document.querySelectorAll("span.math, div.math")];
  report.mathCount = math.length;
  report.unrendered = math.filter((el) => !el.querySelector("mjx-container")).map((el) => el.textContent.slice(0, 120));
  report.mathErrors = [...document.querySelectorAll("mjx-merror")].map(
    (el) => (el.getAttribute("data-mjx-error") || el.textContent).slice(0, 200));
  // the visible text outside code and math, one entry per text node
  // .sig: an API signature is code (a default such as paper='000' is a value a user types)
  const skip = "pre, code, kbd, samp, tt, script, style, noscript, textarea, mjx-container, .math, .highlight, .headerlink, .sig";
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const texts = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!el || el.closest(skip)) continue;
    const t = n.textContent;
    if (t.trim()) texts.push(t);
  }
  report.texts = texts;
  // links and anchors
  report.links = [...document.querySelectorAll("a[href]")].map((a) => ({href: a.href, raw: a.getAttribute("href"), text: a.textContent.slice(0, 80)}));
  report.ids = [...document.querySelectorAll("[id]")].map((el) => el.id).concat(
    [...document.querySelectorAll("a[name]")].map((el) => el.getAttribute("name")));
  report.resources = [...document.querySelectorAll("script[src], link[href], img[src], iframe[src]")]
    .map((el) => el.src || el.href);
  // layout at this viewport width
  const doc = document.documentElement;
  report.viewport = {width: window.innerWidth, scrollWidth: doc.scrollWidth, clientWidth: doc.clientWidth};
  const body = document.querySelector("div.body") || document.querySelector('[role="main"]');
  const side = document.querySelector("div.sphinxsidebar");
  const rect = (el) => { const r = el.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top + window.scrollY, bottom: r.bottom + window.scrollY}; };
  report.bodyRect = body ? rect(body) : null;
  report.sidebarRect = side ? rect(side) : null;
  const overflow = [];
  if (body) {
    const right = body.getBoundingClientRect().right + 1;
    const scrolls = (a) => ["auto", "scroll", "hidden"].includes(getComputedStyle(a).overflowX);
    const reported = new Set();
    for (const el of body.querySelectorAll("*")) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.right <= right) continue;
      // fine if a scrollable ancestor inside the column clips it; report only the outermost culprit
      let skip = false;
      for (let a = el.parentElement; a && a !== body; a = a.parentElement) {
        if (reported.has(a) || (scrolls(a) && a.getBoundingClientRect().right <= right)) { skip = true; break; }
      }
      if (skip || el.closest("mjx-assistive-mml")) continue;
      reported.add(el);
      overflow.push(`${el.tagName.toLowerCase()}${el.className ? "." + String(el.className).split(" ")[0] : ""} ends at ${Math.round(r.right)} px, the column at ${Math.round(right)} px: ${el.textContent.slice(0, 60).replace(/\s+/g, " ")}`);
    }
  }
  report.overflow = overflow.slice(0, 20);
  return report;
})()
