// Behaviour every page shares, with no inline script or handler in the markup:
// - a form (or a submit button) with data-confirm asks before a destructive action;
// - cp.usd(micros) formats money as the server's `usd` filter does, so one amount reads the
//   same in a panel drawn by the server and in one drawn here;
// - cp.plotConfig() is every Plotly chart's configuration.
(function () {
  "use strict";

  document.addEventListener("submit", function (e) {
    var form = e.target;
    var button = e.submitter;
    var question = (button && button.dataset.confirm) || (form.dataset && form.dataset.confirm);
    if (question && !window.confirm(question)) {
      e.preventDefault();
      e.stopImmediatePropagation();
    }
  }, true);

  function usd(micros, places) {
    if (micros === null || micros === undefined || !isFinite(micros)) return "\u2013";
    places = places === undefined ? 2 : places;
    var sign = micros < 0 ? "-" : "";
    var size = Math.abs(Math.round(micros));
    var digits = places;
    if (size > 0 && size < 1e6) {
      // Below a dollar: two significant digits, at most six decimals (vertexplan display_usd).
      digits = Math.max(places, Math.min(6, 6 - String(size).length + 2));
    }
    var text = (size / 1e6).toFixed(digits);
    if (digits > places) {
      text = text.replace(/0+$/, "");
      var parts = text.split(".");
      while (parts[1].length < places) parts[1] += "0";
      text = parts.join(".");
    }
    var split = text.split(".");
    split[0] = split[0].replace(/\B(?=(\d{3})+(?!\d))/g, ",");
    return sign + "$" + split.join(".");
  }

  // Plotly's settings for every chart: no logo, and no toolbar on a phone (a viewport under
  // 600 px), where it covers the legend and a finger cannot aim at its buttons anyway.
  var NARROW_PX = 600;
  function plotConfig() {
    return { displaylogo: false, responsive: true,
             displayModeBar: window.innerWidth < NARROW_PX ? false : "hover" };
  }

  window.cp = window.cp || {};
  window.cp.usd = usd;
  window.cp.plotConfig = plotConfig;
})();
