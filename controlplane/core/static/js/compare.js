// Compare view: each run's metrics.json fetched once, its training loss (and eval metrics,
// dashed) overlaid on one chart; smoothing, log y, and x as step or time since the run began.
(function () {
  "use strict";
  var el = document.getElementById("compare-chart");
  var source = document.getElementById("compare-runs");
  if (!el || !source || !window.Plotly) return;
  var runs = JSON.parse(source.textContent);
  var COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                "#17becf"];
  var smoothing = document.getElementById("chart-smoothing");
  var logy = document.getElementById("chart-logy");
  var xaxis = document.getElementById("chart-x");
  var loaded = [];

  function smooth(values, weight) {
    if (!weight) return values;
    var prev = null;
    return values.map(function (v) { prev = prev === null ? v : prev * weight + v * (1 - weight); return prev; });
  }

  function draw() {
    var weight = Number(smoothing && smoothing.value) || 0;
    var wall = xaxis && xaxis.value === "time";
    var traces = [];
    loaded.forEach(function (run, n) {
      var d = run.data, x = [], y = [];
      var t0 = d.t.length ? Date.parse(d.t[0]) : 0;
      for (var i = 0; i < d.steps.length; i++) {
        if (d.loss[i] === null || d.loss[i] === undefined) continue;
        x.push(wall ? (Date.parse(d.t[i]) - t0) / 1000 : d.steps[i]);
        y.push(d.loss[i]);
      }
      var color = run.color || COLORS[n % COLORS.length];
      traces.push({ type: "scatter", mode: "lines", name: run.name, x: x, y: smooth(y, weight),
                    line: { color: color, width: 1.5 },
                    hovertemplate: "%{x}<br>loss %{y:.4f}<extra>" + run.name + "</extra>" });
      var evals = (d.evals || []).filter(function (e) { return e.metrics.val_loss !== undefined; });
      if (evals.length) {
        traces.push({ type: "scatter", mode: "lines+markers", name: run.name + " val_loss",
                      x: evals.map(function (e) { return wall ? (Date.parse(e.t) - t0) / 1000 : e.step; }),
                      y: smooth(evals.map(function (e) { return e.metrics.val_loss; }), weight),
                      line: { color: color, dash: "dash", width: 1.5 }, marker: { size: 5 } });
      }
    });
    window.Plotly.react(el, traces, {
      margin: { l: 55, r: 10, t: 20, b: 40 }, uirevision: "keep", font: { size: 11 },
      legend: { orientation: "h", y: 1.1 }, paper_bgcolor: "rgba(0,0,0,0)",
      plot_bgcolor: "rgba(0,0,0,0)",
      xaxis: { title: { text: wall ? "seconds since the run's first step" : "step" } },
      yaxis: { title: { text: "loss" }, type: logy && logy.checked ? "log" : "linear" }
    }, window.cp.plotConfig());
    el.dataset.runs = String(loaded.length);
  }

  Promise.all(runs.map(function (run) {
    return fetch(run.metrics_url, { credentials: "same-origin",
                                    headers: { Accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) {
        return data ? { name: run.name, color: run.color, data: data } : null;
      })
      .catch(function () { return null; });
  })).then(function (all) {
    loaded = all.filter(Boolean);
    draw();
  });
  [smoothing, logy, xaxis].forEach(function (c) { if (c) c.addEventListener("input", draw); });
})();
