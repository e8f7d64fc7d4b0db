// Search result summaries are plain text cut from each page's HTML, where a formula is still its
// LaTeX source (MathJax typesets it only when the page itself is shown). Show "[formula]" there
// instead of raw LaTeX. Patches Sphinx's Search.htmlToText (searchtools.js) on the search page.
document.addEventListener("DOMContentLoaded", () => {
  if (typeof Search === "undefined" || !Search.htmlToText) return;
  const htmlToText = Search.htmlToText;
  Search.htmlToText = (htmlString, anchor) => {
    const doc = new DOMParser().parseFromString(htmlString, "text/html");
    doc.querySelectorAll("span.math, div.math").forEach((el) => el.replaceWith("[formula]"));
    return htmlToText(doc.documentElement.outerHTML, anchor);
  };
});
