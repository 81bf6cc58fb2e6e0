// judgelab view: keyboard use of the rows table (served from the package; no external scripts).
// A row is focusable (Tab); Enter or Space opens it; ArrowDown/ArrowUp (or j/k) move between rows.
(function () {
  "use strict";
  function rows() { return Array.prototype.slice.call(document.querySelectorAll("tr[data-href]")); }
  document.addEventListener("keydown", function (ev) {
    var t = ev.target;
    if (!t || t.tagName !== "TR" || !t.dataset.href) { return; }
    var list = rows(), i = list.indexOf(t);
    if (ev.key === "Enter" || ev.key === " ") {
      ev.preventDefault(); window.location.href = t.dataset.href;
    } else if ((ev.key === "ArrowDown" || ev.key === "j") && i + 1 < list.length) {
      ev.preventDefault(); list[i + 1].focus();
    } else if ((ev.key === "ArrowUp" || ev.key === "k") && i > 0) {
      ev.preventDefault(); list[i - 1].focus();
    }
  });
  document.addEventListener("click", function (ev) {
    var t = ev.target;
    if (t.closest("a, button, summary, details, input, select, textarea")) { return; }
    var tr = t.closest("tr[data-href]");
    if (tr) { window.location.href = tr.dataset.href; }
  });
}());
