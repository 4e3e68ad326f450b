// Cost charts with Plotly. Each chart is a <div> next to a JSON <script> (Django's
// json_script) holding its data, in dollars: a job's cost breakdown on the job page (redrawn
// when htmx refreshes the cost panel), a team's spend over the month on the spend page.
(function () {
  "use strict";

  function data(id) {
    var node = document.getElementById(id);
    return node ? JSON.parse(node.textContent) : null;
  }

  function jobCost() {
    var el = document.getElementById("cost-chart");
    var d = data("cost-chart-data");
    if (!el || !d || !window.Plotly) return;
    var traces = [
      { type: "bar", name: "by resource", x: d.resources, y: d.resource_usd,
        marker: { color: "#1f77b4" }, hovertemplate: "%{x}: $%{y:.4f}<extra></extra>" },
      { type: "bar", name: "useful", x: ["total"], y: [d.useful_usd],
        marker: { color: "#2ca02c" }, hovertemplate: "useful: $%{y:.4f}<extra></extra>" },
      { type: "bar", name: "lost to preemptions", x: ["total"], y: [d.lost_usd],
        marker: { color: "#d62728" }, hovertemplate: "lost: $%{y:.4f}<extra></extra>" }
    ];
    window.Plotly.react(el, traces, {
      barmode: "stack", margin: { t: 10, r: 10, b: 60, l: 60 },
      yaxis: { title: { text: "USD" }, tickprefix: "$", tickformat: ",.4~f",
               rangemode: "tozero" },
      legend: { orientation: "h" }
    }, window.cp.plotConfig());
  }

  // Spend per day as stacked bars (one colour per job or accelerator): the series arrive
  // cumulative over the month, so each day's bar is the difference from the day before.
  function daily(values) {
    return values.map(function (v, i) { return i ? v - values[i - 1] : v; });
  }

  function spendChart(elId, series, title) {
    var el = document.getElementById(elId);
    if (!el || !series || !window.Plotly) return;
    var traces = series.map(function (s) {
      // Each series' own colour (controlplane/core/palette.py): Plotly's cycle repeats.
      return { type: "bar", name: s.name, x: s.days, y: daily(s.usd),
               marker: s.color ? { color: s.color } : undefined,
               hovertemplate: "%{x|%b %d}: $%{y:,.4~f}<extra>" + s.name + "</extra>" };
    });
    var layout = {
      title: { text: title }, margin: { t: 40, r: 10, b: 40, l: 60 }, barmode: "stack",
      yaxis: { title: { text: "USD per day" }, tickprefix: "$", tickformat: ",.4~f",
               rangemode: "tozero" },
      // Whole days on the axis: never hours or milliseconds between two jobs' dots.
      xaxis: { type: "date", tickformat: "%b %d", dtick: 86400000 },
      legend: { orientation: "h" }
    };
    if (!series.length) {
      layout.annotations = [{ text: "No spend this month", showarrow: false,
                              xref: "paper", yref: "paper", x: 0.5, y: 0.5 }];
      layout.xaxis = { visible: false };
      layout.yaxis = { visible: false };
    }
    window.Plotly.react(el, traces, layout, window.cp.plotConfig());
  }

  function teamSpend() {
    var d = data("spend-data");
    if (!d) return;
    spendChart("spend-by-job", d.by_job, "By job");
    spendChart("spend-by-accelerator", d.by_accelerator, "By accelerator");
  }

  function draw() { jobCost(); teamSpend(); }
  document.addEventListener("DOMContentLoaded", draw);
  document.body.addEventListener("htmx:afterSwap", jobCost);
})();
