// Job page, live without a reload. The training panel fetches metrics.json every few seconds
// while the job is active and redraws four charts (loss, learning rate, throughput, step
// time) with Plotly.react, which keeps the user's zoom; it also fills the progress bar (steps,
// speed, ETA, cost so far) and the failures recognised in the logs. The log panel is polled by
// htmx with the filter form's values; "follow" off pauses the polling and the scrolling.
(function () {
  "use strict";
  var POLL_MS = 3000;
  var panel = document.getElementById("job-training");
  var chart = document.getElementById("metrics-chart");
  var METRICS = [
    { key: "loss", title: "loss", format: ".4f", tick: "" },
    { key: "lr", title: "learning rate", format: ".3e", tick: ".1e" },
    { key: "tokens_per_s", title: "throughput (tokens/s)", format: ",.0f", tick: "~s" },
    { key: "step_time_s", title: "step time (s)", format: ".3f", tick: "" }
  ];
  var COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2"];

  // --- charts -----------------------------------------------------------------------------
  function traces(data) {
    // One line per attempt and metric: a resumed attempt repeats steps after its checkpoint.
    var out = [];
    var attempts = [];
    data.attempt.forEach(function (a) { if (attempts.indexOf(a) < 0) attempts.push(a); });
    METRICS.forEach(function (metric, m) {
      var values = data[metric.key] || [];
      attempts.forEach(function (a, n) {
        var x = [], y = [];
        for (var i = 0; i < data.steps.length; i++) {
          if (data.attempt[i] === a && values[i] !== null && values[i] !== undefined) {
            x.push(data.steps[i]);
            y.push(values[i]);
          }
        }
        if (!x.length) return;
        var axis = m === 0 ? "" : String(m + 1);
        out.push({
          type: "scatter", mode: "lines", name: "attempt " + a, legendgroup: "a" + a,
          showlegend: m === 0, x: x, y: y, xaxis: "x" + axis, yaxis: "y" + axis,
          line: { color: COLORS[n % COLORS.length], width: 1.5 },
          hovertemplate: "step %{x}<br>" + metric.title + " %{y:" + metric.format +
                         "}<extra>attempt " + a + "</extra>"
        });
      });
    });
    return out;
  }

  function layout(empty) {
    var base = {
      grid: { rows: 2, columns: 2, pattern: "independent", xgap: 0.2, ygap: 0.22 },
      margin: { l: 55, r: 10, t: 30, b: 35 },
      legend: { orientation: "h", y: 1.12 },
      uirevision: "keep",  // keep zoom and hidden traces across updates
      font: { size: 11 },
      paper_bgcolor: "rgba(0,0,0,0)",
      plot_bgcolor: "rgba(0,0,0,0)",
      annotations: []
    };
    METRICS.forEach(function (metric, m) {
      var axis = m === 0 ? "" : String(m + 1);
      base["xaxis" + axis] = { title: { text: m >= 2 ? "step" : "" }, zeroline: false };
      base["yaxis" + axis] = { title: { text: metric.title }, zeroline: false,
                               tickformat: metric.tick };
    });
    if (empty) {
      base.annotations.push({ text: "No step metrics yet", showarrow: false,
                              xref: "paper", yref: "paper", x: 0.5, y: 0.5 });
    }
    return base;
  }

  // --- progress, ETA, cost -----------------------------------------------------------------
  function duration(seconds) {
    if (seconds === null || seconds === undefined) return "–";
    var s = Math.round(seconds);
    if (s < 90) return s + " s";
    var m = Math.round(s / 60);
    if (m < 90) return m + " min";
    return Math.floor(m / 60) + " h " + ("0" + (m % 60)).slice(-2) + " min";
  }

  function text(id, value) {
    var el = document.getElementById(id);
    if (el) el.textContent = value;
  }

  function showProgress(p, active) {
    var label = "step " + (p.last_step === null ? "–" : p.last_step) + " / " +
                (p.total_steps === null ? "?" : p.total_steps);
    if (p.percent !== null) label += " (" + p.percent + "%)";
    text("train-progress", label);
    var bar = document.getElementById("train-bar");
    if (bar) bar.style.width = (p.percent || 0) + "%";
    text("train-speed", p.steps_per_s ? p.steps_per_s.toPrecision(3) + " steps/s" : "–");
    text("train-eta", active ? duration(p.eta_s) : "–");
    text("train-cost", p.cost_so_far_micros === null ? "not known yet"
                       : "$" + (p.cost_so_far_micros / 1e6).toFixed(2));
  }

  // --- failures ------------------------------------------------------------------------------
  function element(tag, cls, content) {
    var el = document.createElement(tag);
    if (cls) el.className = cls;
    if (content) el.textContent = content;  // text, never markup: it comes from log lines
    return el;
  }

  function showFailures(list) {
    var box = document.getElementById("job-diagnosis");
    if (!box) return;
    box.textContent = "";
    list.forEach(function (f) {
      var item = element("div", "failure");
      item.appendChild(element("h3", "", f.title + (f.count > 1 ? " (" + f.count + " times)" : "")));
      item.appendChild(element("p", "", f.explanation));
      item.appendChild(element("p", "", "What to do: " + f.fix));
      var evidence = f.summary + (f.last_frame ? "\n  at " + f.last_frame : "");
      item.appendChild(element("pre", "evidence mono", evidence));
      item.appendChild(element("p", "muted small", (f.replica || "") + " attempt " + f.attempt +
                               ", " + new Date(f.timestamp).toLocaleString()));
      box.appendChild(item);
    });
  }

  function draw(data) {
    var t = traces(data);
    window.Plotly.react(chart, t, layout(t.length === 0), { displaylogo: false, responsive: true });
    showProgress(data.progress, data.active);
    showFailures(data.failures || []);
  }

  function poll() {
    fetch(panel.dataset.metricsUrl, { credentials: "same-origin",
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

  if (panel && chart && window.Plotly) poll();

  // --- log panel ---------------------------------------------------------------------------
  var filters = document.getElementById("log-filters");
  var stick = true;
  function logPanel() { return document.getElementById("log-panel"); }
  function following() {
    var box = document.getElementById("log-follow");
    return !box || box.checked;
  }
  function toBottom() {
    var p = logPanel();
    if (p && stick && following()) p.scrollTop = p.scrollHeight;
  }
  function applyFilters() {
    stick = true;
    if (filters.requestSubmit) filters.requestSubmit();
    else window.htmx.trigger(filters, "submit");
  }
  if (filters) {
    filters.addEventListener("change", function (e) {
      if (e.target.name) applyFilters();  // the follow box is not a filter
    });
    var typing = null;
    filters.addEventListener("input", function (e) {
      if (e.target.name !== "q") return;
      clearTimeout(typing);
      typing = setTimeout(applyFilters, 400);
    });
    var follow = document.getElementById("log-follow");
    if (follow) follow.addEventListener("change", function () {
      stick = follow.checked;
      toBottom();
    });
  }
  document.body.addEventListener("htmx:beforeRequest", function (e) {
    // Paused: the tail stops asking; a filter change still applies.
    if (e.detail.elt && e.detail.elt.id === "log-panel" && !following()) e.preventDefault();
  });
  document.body.addEventListener("htmx:beforeSwap", function (e) {
    // A poll keeps the reader where they scrolled to; a filter change starts at the bottom.
    var p = logPanel();
    var from = e.detail.requestConfig && e.detail.requestConfig.elt;
    if (p && from && from.id === "log-panel") {
      stick = p.scrollTop + p.clientHeight >= p.scrollHeight - 20;
    }
  });
  document.body.addEventListener("htmx:afterSettle", toBottom);
  toBottom();
})();
