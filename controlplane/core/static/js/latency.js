// Latency charts: see serving/includes/latency_chart.html for what they draw.
(function () {
  "use strict";
  var POLL_MS = 10000;

  function traces(d) {
    var p = d.probe, m = d.monitoring, out = [];
    [["p50", "#7aa6e0"], ["p95", "#1f5fbf"], ["p99", "#0b2e66"]].forEach(function (q) {
      out.push({type: "scatter", mode: "lines+markers", name: "probe " + q[0], x: p.t,
                y: p[q[0]], line: {color: q[1]}, marker: {size: 3}, connectgaps: false,
                hovertemplate: "%{y:.1f} ms<extra>probe " + q[0] + "</extra>"});
    });
    out.push({type: "bar", name: "error rate", x: p.t, y: p.error_rate, yaxis: "y2",
              marker: {color: "rgba(200,40,40,0.35)"},
              hovertemplate: "%{y:.1%}<extra>errors</extra>"});
    if (m.t.length) {
      [["p50", "#8fbf8f"], ["p95", "#2e8b57"], ["p99", "#145a32"]].forEach(function (q) {
        out.push({type: "scatter", mode: "lines", name: "Vertex " + q[0], x: m.t, y: m[q[0]],
                  line: {color: q[1], dash: "dot"}});
      });
    }
    if (d.alerts.length) {
      out.push({type: "scatter", mode: "markers", name: "SLO alerts",
                x: d.alerts.map(function (a) { return a.at; }),
                y: d.alerts.map(function (a) { return a.p95_ms; }),
                text: d.alerts.map(function (a) { return a.kind; }),
                marker: {size: 11, symbol: "diamond",
                         color: d.alerts.map(function (a) { return a.kind === "BREACH" ? "#c0392b" : "#27ae60"; })},
                hovertemplate: "%{text}<br>p95 %{y:.0f} ms<extra></extra>"});
    }
    return out;
  }

  // The x range: the requested window when there is nothing to show, else the span of the
  // data itself (a minute of probes fills the chart rather than a sliver of the hour).
  function window_of(d) {
    var times = d.probe.t.concat(d.monitoring.t, d.alerts.map(function (a) { return a.at; }));
    if (!times.length) return [d.start, d.end];
    var ms = times.map(function (t) { return Date.parse(t); }).filter(isFinite);
    var lo = Math.min.apply(null, ms), hi = Math.max.apply(null, ms);
    var pad = Math.max((hi - lo) * 0.03, 5000);
    return [new Date(lo - pad).toISOString(), new Date(hi + pad).toISOString()];
  }

  function layout(d) {
    var shapes = [], empty = d.probe.t.length === 0 && d.monitoring.t.length === 0;
    if (d.slo && d.slo.enabled) {
      shapes.push({type: "line", xref: "paper", x0: 0, x1: 1, y0: d.slo.p95_ms, y1: d.slo.p95_ms,
                   line: {color: "#c0392b", dash: "dash", width: 1}});
    }
    var l = {margin: {l: 50, r: 50, t: 10, b: 40}, uirevision: "keep", font: {size: 11},
             xaxis: {type: "date", range: window_of(d)},
             yaxis: {title: {text: "latency (ms)"}, rangemode: "tozero"},
             // Whole quarters: left to itself the overlaid axis lines its ticks up with the
             // latency axis's and reads 19%, 39%, 58%.
             yaxis2: {title: {text: "error rate"}, overlaying: "y", side: "right",
                      tickformat: ".0%", range: [0, 1], showgrid: false, tickmode: "array",
                      tickvals: [0, 0.25, 0.5, 0.75, 1]},
             legend: {orientation: "h", y: 1.15}, shapes: shapes,
             paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)"};
    if (empty) {
      l.annotations = [{text: "No probe yet", showarrow: false, xref: "paper", yref: "paper",
                        x: 0.5, y: 0.5}];
    }
    return l;
  }

  function follow(el) {
    function poll() {
      fetch(el.dataset.url, {credentials: "same-origin", headers: {Accept: "application/json"}})
        .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
        .then(function (d) {
          window.Plotly.react(el, traces(d), layout(d), window.cp.plotConfig());
          el.dataset.drawn = "true";
          setTimeout(poll, POLL_MS);
        })
        .catch(function () { setTimeout(poll, POLL_MS * 2); });
    }
    poll();
  }

  function start() {
    if (!window.Plotly) { setTimeout(start, 200); return; }
    document.querySelectorAll(".latency-chart[data-url]").forEach(function (el) {
      if (!el.dataset.following) { el.dataset.following = "true"; follow(el); }
    });
  }
  start();
})();
