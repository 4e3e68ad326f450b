// Job page: the loss curve follows the job without a page reload. It fetches metrics.json
// every few seconds while the job is active and redraws with Plotly.react (which keeps the
// user's zoom); the last fetch after the job ends draws the final curve and stops.
(function () {
  "use strict";
  var POLL_MS = 3000;
  var chart = document.getElementById("loss-chart");

  function traces(data) {
    // One line per attempt: a resumed attempt repeats steps after its checkpoint.
    var byAttempt = {};
    var order = [];
    for (var i = 0; i < data.steps.length; i++) {
      var a = data.attempt[i];
      if (!byAttempt[a]) {
        byAttempt[a] = { x: [], y: [] };
        order.push(a);
      }
      if (data.loss[i] !== null) {
        byAttempt[a].x.push(data.steps[i]);
        byAttempt[a].y.push(data.loss[i]);
      }
    }
    return order.map(function (a) {
      return {
        type: "scatter", mode: "lines", name: "attempt " + a,
        x: byAttempt[a].x, y: byAttempt[a].y,
        hovertemplate: "step %{x}<br>loss %{y:.4f}<extra>attempt " + a + "</extra>"
      };
    });
  }

  function layout(empty) {
    var base = {
      margin: { l: 50, r: 10, t: 10, b: 40 },
      xaxis: { title: { text: "step" }, zeroline: false },
      yaxis: { title: { text: "loss" }, zeroline: false },
      legend: { orientation: "h", y: 1.1 },
      uirevision: "keep",  // keep zoom and hidden traces across updates
      font: { size: 11 },
      paper_bgcolor: "rgba(0,0,0,0)",
      plot_bgcolor: "rgba(0,0,0,0)"
    };
    if (empty) {
      base.annotations = [{ text: "No step metrics yet", showarrow: false,
                            xref: "paper", yref: "paper", x: 0.5, y: 0.5 }];
    }
    return base;
  }

  function draw(data) {
    var t = traces(data);
    window.Plotly.react(chart, t, layout(t.length === 0),
                        { displaylogo: false, responsive: true });
  }

  function poll() {
    fetch(chart.dataset.metricsUrl, { credentials: "same-origin",
                                      headers: { Accept: "application/json" } })
      .then(function (r) {
        if (!r.ok) throw new Error("metrics: HTTP " + r.status);
        return r.json();
      })
      .then(function (data) {
        draw(data);
        if (data.active) setTimeout(poll, POLL_MS);
      })
      .catch(function () {
        // A failed poll (network, a restarting server) is retried, not fatal.
        setTimeout(poll, POLL_MS * 2);
      });
  }

  if (chart && window.Plotly) poll();

  // Keep the log panel scrolled to the newest line unless the reader scrolled up.
  var stick = true;
  function logPanel() { return document.getElementById("log-panel"); }
  function toBottom() {
    var p = logPanel();
    if (p && stick) p.scrollTop = p.scrollHeight;
  }
  document.body.addEventListener("htmx:beforeSwap", function (e) {
    var p = logPanel();
    if (p && e.detail.target && e.detail.target.id === "job-logs") {
      stick = p.scrollTop + p.clientHeight >= p.scrollHeight - 20;
    }
  });
  document.body.addEventListener("htmx:afterSettle", toBottom);
  toBottom();
})();
