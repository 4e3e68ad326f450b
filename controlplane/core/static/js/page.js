// Behaviour every page shares, kept out of the templates so the Content-Security-Policy
// allows no inline script or style: bar widths (data-width, a percentage), on load and on every
// part htmx swaps in. Confirmations (data-confirm) are app.js's.
(function () {
  "use strict";

  function widths(root) {
    root.querySelectorAll("[data-width]").forEach(function (el) {
      var pct = parseFloat(el.dataset.width);
      el.style.width = (isFinite(pct) ? Math.max(0, Math.min(100, pct)) : 0) + "%";
    });
  }

  document.addEventListener("DOMContentLoaded", function () { widths(document); });
  document.addEventListener("htmx:afterSettle", function (event) { widths(event.target); });
})();
