// Job page, live without a reload. The training panel fetches metrics.json every few seconds
// while the job is active and redraws four charts (loss, learning rate, throughput, step
// time) and MFU below them with Plotly.react, which keeps the user's zoom; it also fills the progress bar (steps,
// speed, ETA, cost so far) and the failures recognised in the logs. The log panel is polled by
// htmx with the filter form's values; "follow" off pauses the polling and the scrolling.
// While the job runs, the page also listens to its event stream (/jobs/<id>/events/,
// server-sent events): new lines are appended as they are stored, a new step redraws the
// charts, a state change reloads the header, timeline and checkpoints. While the stream is
// open the timed polls stand down; when it fails they take over again.
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
  // The lines' colours come with the data (data.colors: one per attempt, then one per eval
  // metric, all different); these stand in for a server that sends none.
  var COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2"];

  function colorOf(data, n) {
    var palette = data.colors && data.colors.length ? data.colors : COLORS;
    return palette[n % palette.length];
  }

  // --- charts -----------------------------------------------------------------------------
  // Controls (data-chart-*): smoothing (exponential moving average, as W&B), log y, and x as
  // step or wall-clock. Eval metrics (val_loss...) join the loss chart as dashed lines;
  // preemptions, restarts and resumes are vertical markers on every chart.
  var controls = {
    smoothing: document.getElementById("chart-smoothing"),
    logy: document.getElementById("chart-logy"),
    xaxis: document.getElementById("chart-x")
  };
  var MARKER_COLORS = { preempted: "#9a5b00", replica_restarted: "#c62828", resumed: "#2e7d32" };
  var last = null;

  function setting(name, fallback) {
    var el = controls[name];
    if (!el) return fallback;
    if (el.type === "checkbox") return el.checked;
    return el.value;
  }

  function smooth(values, weight) {
    if (!weight) return values;
    var out = [], prev = null;
    values.forEach(function (v) {
      prev = prev === null ? v : prev * weight + v * (1 - weight);
      out.push(prev);
    });
    return out;
  }

  function xOf(data, i, wall) { return wall ? data.t[i] : data.steps[i]; }

  function traces(data) {
    // One line per attempt and metric: a resumed attempt repeats steps after its checkpoint.
    var out = [];
    var wall = setting("xaxis", "step") === "time";
    var weight = Number(setting("smoothing", 0)) || 0;
    var attempts = [];
    data.attempt.forEach(function (a) { if (attempts.indexOf(a) < 0) attempts.push(a); });
    METRICS.forEach(function (metric, m) {
      var values = data[metric.key] || [];
      attempts.forEach(function (a, n) {
        var x = [], y = [];
        for (var i = 0; i < data.steps.length; i++) {
          if (data.attempt[i] === a && values[i] !== null && values[i] !== undefined) {
            x.push(xOf(data, i, wall));
            y.push(values[i]);
          }
        }
        if (!x.length) return;
        var axis = m === 0 ? "" : String(m + 1);
        out.push({
          type: "scatter", mode: "lines", name: "train, attempt " + a, legendgroup: "a" + a,
          showlegend: m === 0, x: x, y: m === 0 ? smooth(y, weight) : y,
          xaxis: "x" + axis, yaxis: "y" + axis,
          line: { color: colorOf(data, n), width: 1.5 },
          hovertemplate: (wall ? "%{x}" : "step %{x}") + "<br>" + metric.title + " %{y:" +
                         metric.format + "}<extra>attempt " + a + "</extra>"
        });
      });
    });
    // Evaluations: one dashed line per eval metric (losses only: data.eval_names), on the loss
    // chart, each in a colour of its own after the attempts'.
    var names = data.eval_names || [];
    names.forEach(function (name, n) {
      var rows = (data.evals || []).filter(function (e) { return e.metrics[name] !== undefined; });
      out.push({
        type: "scatter", mode: "lines+markers", name: "eval " + name,
        x: rows.map(function (e) { return wall ? e.t : e.step; }),
        y: smooth(rows.map(function (e) { return e.metrics[name]; }), weight),
        xaxis: "x", yaxis: "y", marker: { size: 5 },
        line: { dash: "dash", width: 1.5, color: colorOf(data, attempts.length + n) },
        hovertemplate: name + " %{y:.4f}<extra>eval</extra>"
      });
    });
    return out;
  }

  var LANE_PX = 12;

  function markerShapes(data) {
    var wall = setting("xaxis", "step") === "time";
    var shapes = [], notes = [];
    (data.markers || []).forEach(function (mk) {
      var x = wall ? mk.t : mk.step;
      if (x === null || x === undefined) return;
      for (var m = 0; m < METRICS.length; m++) {
        var axis = m === 0 ? "" : String(m + 1);
        shapes.push({ type: "line", xref: "x" + axis, yref: "y" + axis + " domain", x0: x, x1: x,
                      y0: 0, y1: 1, line: { color: MARKER_COLORS[mk.kind] || "#555",
                                            width: 1, dash: "dot" } });
      }
    });
    // One label per step (the kinds at a step joined), on the lane the server gave it, so
    // labels of nearby steps sit one under another instead of on top of each other.
    (data.marker_labels || []).forEach(function (label) {
      var x = wall ? label.t : label.step;
      if (x === null || x === undefined) return;
      notes.push({ x: x, xref: "x", yref: "y domain", y: 1, yanchor: "bottom",
                   yshift: -LANE_PX * label.lane, text: label.text, showarrow: false,
                   bgcolor: "rgba(255,255,255,0.85)",
                   font: { size: 9, color: MARKER_COLORS[label.kinds[0]] || "#555" } });
    });
    // The compile steps left out of the step-time and throughput charts, named there.
    var compiled = data.compile_steps || [];
    if (compiled.length) {
      var first = compiled[0];
      var said = "step " + first.step + ": " + first.step_time_s.toFixed(1) + " s compiling" +
                 (compiled.length > 1 ? " (+" + (compiled.length - 1) + " more)" : "") +
                 ", not plotted";
      ["3", "4"].forEach(function (axis) {
        notes.push({ xref: "x" + axis + " domain", yref: "y" + axis + " domain", x: 1, y: 1,
                     xanchor: "right", yanchor: "bottom", text: said, showarrow: false,
                     font: { size: 9, color: "#555" } });
      });
    }
    return { shapes: shapes, annotations: notes };
  }

  function layout(empty, data) {
    var narrow = chart.clientWidth < 640;
    var wall = setting("xaxis", "step") === "time";
    var base = {
      grid: narrow ? { rows: 4, columns: 1, pattern: "independent", ygap: 0.12 }
                   : { rows: 2, columns: 2, pattern: "independent", xgap: 0.2, ygap: 0.22 },
      margin: { l: 55, r: 10, t: 30, b: 35 },
      legend: { orientation: "h", y: narrow ? 1.05 : 1.12 },
      uirevision: "keep",  // keep zoom and hidden traces across updates
      font: { size: 11 },
      paper_bgcolor: "rgba(0,0,0,0)",
      plot_bgcolor: "rgba(0,0,0,0)",
      annotations: []
    };
    METRICS.forEach(function (metric, m) {
      var axis = m === 0 ? "" : String(m + 1);
      base["xaxis" + axis] = { title: { text: m >= 2 || narrow ? (wall ? "time" : "step") : "" },
                               zeroline: false, type: wall ? "date" : "linear" };
      base["yaxis" + axis] = { title: { text: metric.title }, zeroline: false,
                               tickformat: metric.tick,
                               type: m === 0 && setting("logy", false) ? "log" : "linear" };
    });
    if (empty) {
      base.annotations.push({ text: "No step metrics yet", showarrow: false,
                              xref: "paper", yref: "paper", x: 0.5, y: 0.5 });
    } else if (data) {
      var marks = markerShapes(data);
      base.shapes = marks.shapes;
      base.annotations = base.annotations.concat(marks.annotations);
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
                       : window.cp.usd(p.cost_so_far_micros));
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

  // --- MFU ------------------------------------------------------------------------------------
  // One line per attempt, in percent of the devices' peak; the note beside says how it is
  // computed (FLOPs per token, the peak and its datasheet) or why it cannot be.
  var mfuChart = document.getElementById("mfu-chart");
  // Left out by the page for a job with no MFU (a CPU job); hidden for an active one until its
  // first MFU arrives.
  var mfuPanel = document.getElementById("mfu-panel");

  function drawMfu(data) {
    if (!mfuChart) return;
    if (mfuPanel && mfuPanel.hidden) {
      if (!(data.mfu || []).some(function (v) { return v !== null && v !== undefined; })) return;
      mfuPanel.hidden = false;
    }
    var wall = setting("xaxis", "step") === "time";
    var weight = Number(setting("smoothing", 0)) || 0;
    var values = data.mfu || [];
    var attempts = [];
    data.attempt.forEach(function (a) { if (attempts.indexOf(a) < 0) attempts.push(a); });
    var t = [];
    attempts.forEach(function (a, n) {
      var x = [], y = [];
      for (var i = 0; i < data.steps.length; i++) {
        if (data.attempt[i] === a && values[i] !== null && values[i] !== undefined) {
          x.push(xOf(data, i, wall));
          y.push(values[i] * 100);
        }
      }
      if (!x.length) return;
      t.push({ type: "scatter", mode: "lines", name: "MFU, attempt " + a, x: x,
               y: smooth(y, weight), line: { color: COLORS[n % COLORS.length], width: 1.5 },
               hovertemplate: (wall ? "%{x}" : "step %{x}") + "<br>MFU %{y:.2f}%" +
                              "<extra>attempt " + a + "</extra>" });
    });
    var lay = {
      margin: { l: 55, r: 10, t: 10, b: 35 }, showlegend: false, uirevision: "keep",
      font: { size: 11 }, paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)",
      xaxis: { title: { text: wall ? "time" : "step" }, zeroline: false,
               type: wall ? "date" : "linear" },
      yaxis: { title: { text: "MFU (% of peak)" }, zeroline: false, ticksuffix: "%",
               rangemode: "tozero" },
      annotations: t.length ? [] : [{ text: "MFU not available", showarrow: false,
                                      xref: "paper", yref: "paper", x: 0.5, y: 0.5 }]
    };
    window.Plotly.react(mfuChart, t, lay, window.cp.plotConfig());
    text("mfu-note", data.mfu_reason ? "MFU not computed: " + data.mfu_reason
                     : (data.mfu_basis ? "MFU = " + data.mfu_basis : ""));
  }

  // Custom panels: one small chart per other number the steps report (grad_norm, epoch, a
  // team's own metric) and per eval metric the loss chart leaves out (accuracy, perplexity),
  // made when the name first appears. Names come from the server, bounded to a metric's
  // characters; they are only ever set as text.
  var customBox = document.getElementById("custom-panels");
  var customCharts = {};

  function customChart(key, title) {
    if (customCharts[key]) return customCharts[key];
    var panel = element("div", "custom-panel");
    panel.dataset.metric = key;
    panel.appendChild(element("h3", "chart-title", title));
    var div = element("div", "chart short custom-chart");
    panel.appendChild(div);
    customBox.appendChild(panel);
    customBox.hidden = false;
    customCharts[key] = div;
    return div;
  }

  function customLayout(wall, name) {
    return {
      margin: { l: 55, r: 10, t: 10, b: 35 }, showlegend: false, uirevision: "keep",
      font: { size: 11 }, paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)",
      xaxis: { title: { text: wall ? "time" : "step" }, zeroline: false,
               type: wall ? "date" : "linear" },
      yaxis: { title: { text: name }, zeroline: false }
    };
  }

  function drawCustom(data) {
    if (!customBox) return;
    var wall = setting("xaxis", "step") === "time";
    var weight = Number(setting("smoothing", 0)) || 0;
    var attempts = [];
    data.attempt.forEach(function (a) { if (attempts.indexOf(a) < 0) attempts.push(a); });
    Object.keys(data.custom || {}).forEach(function (name) {
      var values = data.custom[name];
      var t = [];
      attempts.forEach(function (a, n) {
        var x = [], y = [];
        for (var i = 0; i < data.steps.length; i++) {
          if (data.attempt[i] === a && values[i] !== null && values[i] !== undefined) {
            x.push(xOf(data, i, wall));
            y.push(values[i]);
          }
        }
        if (x.length) t.push({ type: "scatter", mode: "lines", name: name + ", attempt " + a,
                               x: x, y: smooth(y, weight),
                               line: { color: COLORS[n % COLORS.length], width: 1.5 } });
      });
      if (t.length) window.Plotly.react(customChart("step:" + name, name), t,
                                        customLayout(wall, name), window.cp.plotConfig());
    });
    var onLoss = data.eval_names || [];
    var evalNames = [];
    (data.evals || []).forEach(function (e) {
      Object.keys(e.metrics).forEach(function (name) {
        if (onLoss.indexOf(name) < 0 && evalNames.indexOf(name) < 0) evalNames.push(name);
      });
    });
    evalNames.forEach(function (name) {
      var rows = data.evals.filter(function (e) { return e.metrics[name] !== undefined; });
      var t = [{ type: "scatter", mode: "lines+markers", name: "eval " + name,
                 x: rows.map(function (e) { return wall ? e.t : e.step; }),
                 y: rows.map(function (e) { return e.metrics[name]; }),
                 line: { color: COLORS[0], width: 1.5 } }];
      window.Plotly.react(customChart("eval:" + name, "eval " + name), t,
                          customLayout(wall, name), window.cp.plotConfig());
    });
  }

  function redraw() {
    if (!last) return;
    drawMfu(last);
    drawCustom(last);
    var t = traces(last);
    var empty = t.length === 0;
    window.Plotly.react(chart, t, layout(empty, last), window.cp.plotConfig());
    var hint = document.getElementById("metrics-empty-hint");
    if (hint) hint.hidden = !empty;
  }

  function draw(data) {
    last = data;
    redraw();
    showProgress(data.progress, data.active);
    showFailures(data.failures || []);
  }

  Object.keys(controls).forEach(function (name) {
    if (controls[name]) controls[name].addEventListener("input", redraw);
  });

  // Set while the event stream is open: the timed polls then skip their turn.
  var streaming = false;

  function fetchMetrics() {
    return fetch(panel.dataset.metricsUrl, { credentials: "same-origin",
                                             headers: { Accept: "application/json" } })
      .then(function (r) {
        if (!r.ok) throw new Error("metrics: HTTP " + r.status);
        return r.json();
      })
      .then(function (data) { draw(data); return data; });
  }

  function poll() {
    if (streaming) { setTimeout(poll, POLL_MS); return; }
    fetchMetrics()
      .then(function (data) { if (data.active) setTimeout(poll, POLL_MS); })
      .catch(function () {
        // A failed poll (network, a restarting server) is retried, not fatal.
        setTimeout(poll, POLL_MS * 2);
      });
  }

  var charts = panel && chart && window.Plotly;
  if (charts) poll();

  // --- log panel ---------------------------------------------------------------------------
  var filters = document.getElementById("log-filters");
  var stick = true;
  // Each filter change starts a new generation; a reply to a request sent under an older one
  // (a poll already in flight when the severity changed) is dropped, never swapped in.
  var generation = 0;
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
    generation += 1;
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
  var POLLED = ["log-panel", "job-header", "job-timeline", "job-checkpoints"];
  document.body.addEventListener("htmx:beforeRequest", function (e) {
    // Paused: the tail stops asking; a filter change still applies.
    var elt = e.detail.elt;
    var cause = e.detail.requestConfig && e.detail.requestConfig.triggeringEvent;
    var asked = cause && cause.type === "cp-refresh";
    if (elt && elt.id === "log-panel" && !following()) { e.preventDefault(); return; }
    // The stream brings what the timed polls would: they skip while it is open.
    if (elt && streaming && !asked && POLLED.indexOf(elt.id) >= 0) { e.preventDefault(); return; }
    if (elt && (elt.id === "log-panel" || elt === filters)) e.detail.xhr.cpGeneration = generation;
  });
  document.body.addEventListener("htmx:beforeSwap", function (e) {
    // A poll keeps the reader where they scrolled to; a filter change starts at the bottom.
    var sent = e.detail.xhr && e.detail.xhr.cpGeneration;
    if (sent !== undefined && sent !== generation) {
      e.detail.shouldSwap = false;
      return;
    }
    var p = logPanel();
    var from = e.detail.requestConfig && e.detail.requestConfig.elt;
    if (p && from && from.id === "log-panel") {
      stick = p.scrollTop + p.clientHeight >= p.scrollHeight - 20;
    }
  });
  document.body.addEventListener("htmx:afterSettle", toBottom);
  toBottom();

  // --- event stream ----------------------------------------------------------------------
  var logs = document.getElementById("job-logs");
  var eventsUrl = logs && logs.dataset.eventsUrl;
  // Cloud Logging's severity numbers, for the panel's "this level and above" filter.
  var SEVERITY = { DEFAULT: 0, DEBUG: 100, INFO: 200, NOTICE: 300, WARNING: 400, ERROR: 500,
                   CRITICAL: 600, ALERT: 700, EMERGENCY: 800 };
  var missed = false;

  function refresh(id) {
    var el = document.getElementById(id);
    if (el && window.htmx) window.htmx.trigger(el, "cp-refresh");
  }
  function field(name) {
    var el = filters && filters.elements[name];
    return el ? String(el.value || "").trim() : "";
  }
  function matches(line) {
    var sev = field("severity").toUpperCase();
    var least = SEVERITY[sev] !== undefined ? SEVERITY[sev] : (/^[0-9]+$/.test(sev) ? +sev : 0);
    if (least && line.severity < least) return false;
    var replica = field("replica");
    if (replica && line.replica !== replica) return false;
    var q = field("q").toLowerCase();
    return !q || line.message.toLowerCase().indexOf(q) >= 0;
  }
  function lineElement(line) {
    // Text only: a log line is whatever a job printed.
    var div = document.createElement("div");
    div.className = "log-line " + line.severity_class;
    div.setAttribute("data-id", line.id);
    var parts = [["time", line.time], ["span", line.replica || "-", "replica"],
                 ["span", line.severity_name, "sev"], ["span", line.message, "msg"]];
    parts.forEach(function (part, i) {
      if (i) div.appendChild(document.createTextNode(" "));
      var el = document.createElement(part[0]);
      if (part[2]) el.className = part[2];
      el.textContent = part[1];
      div.appendChild(el);
    });
    return div;
  }
  function appendLines(body) {
    var p = logPanel();
    if (!p) return;
    if (!following()) { missed = true; return; }
    if (body.more) { refresh("log-panel"); return; }
    var limit = 200, added = 0;
    var wasAtBottom = p.scrollTop + p.clientHeight >= p.scrollHeight - 20;
    body.lines.forEach(function (line) {
      if (!matches(line)) return;
      var known = p.querySelectorAll(".log-line[data-id]");
      for (var i = 0; i < known.length; i++) {
        if (known[i].getAttribute("data-id") === line.id) return;
      }
      if (!added) {
        var empty = p.querySelector(":scope > .muted");
        if (empty) empty.remove();
      }
      p.appendChild(lineElement(line));
      added += 1;
    });
    var rows = p.querySelectorAll(".log-line");
    for (var j = 0; j < rows.length - limit; j++) rows[j].remove();
    if (added && (wasAtBottom || stick)) { stick = true; toBottom(); }
  }
  var metricsDue = null;
  function stepsArrived() {
    if (metricsDue || !charts) return;
    // Steps come many a second on a fast run: one redraw for a burst of them.
    metricsDue = setTimeout(function () {
      metricsDue = null;
      fetchMetrics().catch(function () {});
    }, 250);
    refresh("job-header");
  }
  function catchUp() {
    if (!following()) missed = true;
    POLLED.forEach(refresh);
    if (charts) fetchMetrics().catch(function () {});
  }

  if (eventsUrl && window.EventSource) {
    var source = new EventSource(eventsUrl);
    var listen = function (kind, handler) {
      source.addEventListener(kind, function (e) {
        var body;
        try { body = JSON.parse(e.data); } catch (err) { return; }
        handler(body);
      });
    };
    listen("ready", function (body) {
      // Subscribed: whatever was stored before now is read once, the rest arrives here.
      streaming = !!body.open;
      catchUp();
      if (!body.open) source.close();  // ended a while ago: nothing more will come
    });
    listen("lines", appendLines);
    listen("steps", stepsArrived);
    // An ended job's stream stays open a little for its late lines, then closes; the
    // reconnect's `ready` says it is over.
    listen("state", catchUp);
    source.onerror = function () {
      // Broken or refused (the browser retries by itself): the polls take over meanwhile.
      streaming = false;
    };
    var followBox = document.getElementById("log-follow");
    if (followBox) followBox.addEventListener("change", function () {
      if (followBox.checked && missed) { missed = false; refresh("log-panel"); }
    });
  }
})();
