// A sweep's trials on parallel coordinates: one vertical axis per parameter and one for the
// objective, one line per trial; the best trial drawn last, thick. Plain SVG, no library.
// Categorical parameters are spread evenly in their order of appearance; numbers on a log
// axis when every value is positive and they span more than a factor of 20.
(function () {
  "use strict";
  var el = document.getElementById("sweep-chart");
  var source = document.getElementById("sweep-chart-data");
  if (!el || !source) return;
  var data = JSON.parse(source.textContent);
  var SVG = "http://www.w3.org/2000/svg";
  var W = 760, H = 300, PAD = 40;
  var trials = data.trials.filter(function (t) {
    return data.axes.some(function (a) { return t.values[a] !== null && t.values[a] !== undefined; });
  });
  if (!trials.length || data.axes.length < 2) { el.textContent = "No trials to draw yet."; return; }

  function node(name, attrs, text) {
    var n = document.createElementNS(SVG, name);
    Object.keys(attrs).forEach(function (k) { n.setAttribute(k, attrs[k]); });
    if (text !== undefined) n.textContent = text;
    return n;
  }

  function scaleFor(axis) {
    var values = trials.map(function (t) { return t.values[axis]; })
      .filter(function (v) { return v !== null && v !== undefined; });
    if (values.some(function (v) { return typeof v !== "number"; })) {
      var cats = [];
      values.forEach(function (v) { if (cats.indexOf(String(v)) < 0) cats.push(String(v)); });
      return { f: function (v) { return cats.length < 2 ? 0.5 : cats.indexOf(String(v)) / (cats.length - 1); },
               lo: cats[0], hi: cats[cats.length - 1] };
    }
    var lo = Math.min.apply(null, values), hi = Math.max.apply(null, values);
    var log = lo > 0 && hi / lo > 20;
    var tf = log ? Math.log : function (v) { return v; };
    return { f: function (v) { return hi === lo ? 0.5 : (tf(v) - tf(lo)) / (tf(hi) - tf(lo)); },
             lo: lo, hi: hi };
  }

  function fmt(v) { return typeof v === "number" ? Number(v.toPrecision(3)).toString() : v; }

  var svg = node("svg", { viewBox: "0 0 " + W + " " + H, width: "100%", role: "img" });
  var step = (W - 2 * PAD) / (data.axes.length - 1);
  var scales = data.axes.map(scaleFor);
  function x(i) { return PAD + i * step; }
  function y(i, v) { return H - PAD - scales[i].f(v) * (H - 2 * PAD); }

  data.axes.forEach(function (axis, i) {
    svg.appendChild(node("line", { x1: x(i), x2: x(i), y1: PAD, y2: H - PAD, stroke: "#888" }));
    svg.appendChild(node("text", { x: x(i), y: PAD - 18, "text-anchor": "middle", "font-size": 12,
                                   "font-weight": i === data.axes.length - 1 ? "bold" : "normal" }, axis));
    svg.appendChild(node("text", { x: x(i), y: PAD - 4, "text-anchor": "middle", "font-size": 10 }, fmt(scales[i].hi)));
    svg.appendChild(node("text", { x: x(i), y: H - PAD + 14, "text-anchor": "middle", "font-size": 10 }, fmt(scales[i].lo)));
  });
  var ordered = trials.filter(function (t) { return !t.best; }).concat(trials.filter(function (t) { return t.best; }));
  ordered.forEach(function (t) {
    var points = [];
    data.axes.forEach(function (axis, i) {
      var v = t.values[axis];
      if (v !== null && v !== undefined) points.push(x(i) + "," + y(i, v));
    });
    var line = node("polyline", {
      points: points.join(" "), fill: "none",
      stroke: t.best ? "#d62728" : (t.state === "SUCCEEDED" ? "#1f77b4" : "#bbb"),
      "stroke-width": t.best ? 3 : 1.5, "data-trial": t.id
    });
    line.appendChild(node("title", {}, "trial " + t.id + (t.best ? " (best)" : "")));
    svg.appendChild(line);
  });
  el.appendChild(svg);
})();
