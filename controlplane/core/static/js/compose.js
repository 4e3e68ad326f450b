// Compose page: optional pools are dimmed while switched off (their fields stay in the form, so
// switching back on keeps what was typed); strategy settings show for their strategy only;
// "Start from" opens the chosen preset or template.
(function () {
  "use strict";
  var form = document.getElementById("compose-form");
  if (!form) return;

  function dim(el, off) {
    el.classList.toggle("dimmed", off);
  }

  document.querySelectorAll("fieldset.pool[data-toggle]").forEach(function (pool) {
    var toggle = document.getElementById(pool.dataset.toggle);
    if (!toggle) return;
    var fields = pool.querySelector(".pool-fields");
    function sync() {
      pool.classList.toggle("off", !toggle.checked);
      if (fields) dim(fields, !toggle.checked);
    }
    toggle.addEventListener("change", sync);
    sync();
  });

  document.querySelectorAll("fieldset.pool[data-choice]").forEach(function (pool) {
    var choice = document.getElementById(pool.dataset.choice);
    if (!choice) return;
    function sync() {
      pool.querySelectorAll(".pool-fields[data-when]").forEach(function (part) {
        part.hidden = part.dataset.when !== choice.value;
      });
    }
    choice.addEventListener("change", sync);
    sync();
  });

  var strategy = form.querySelector("[name=strategy]");
  function syncStrategy() {
    document.querySelectorAll("fieldset.strategy-options").forEach(function (set) {
      var names = (set.dataset.strategies || "").split(" ");
      // Kept visible when it holds an error, so the message is never hidden.
      set.hidden = names.indexOf(strategy.value) < 0 && !set.querySelector(".has-error");
    });
  }
  if (strategy) {
    strategy.addEventListener("change", syncStrategy);
    syncStrategy();
  }

  // The region menu lists the regions that offer the chosen hardware: asked again of the
  // server (data-source, the job-regions view) whenever a pool's machine or accelerator, or
  // whether a pool is on, changes. The current region stays when it still offers it.
  var region = form.querySelector("select[name=region][data-source]");
  function value(name) {
    var el = form.querySelector("[name=" + name + "]");
    if (!el) return "";
    return el.type === "checkbox" ? (el.checked ? "on" : "") : el.value;
  }
  function syncRegions() {
    var params = new URLSearchParams();
    var chief = [value("chief_machine_type"), value("chief_accelerator_type")];
    params.append("machine_type", chief[0]);
    params.append("accelerator_type", chief[1]);
    if (value("workers_enabled")) {  // blank worker fields are the chief's
      params.append("machine_type", value("workers_machine_type") || chief[0]);
      params.append("accelerator_type", value("workers_accelerator_type") || chief[1]);
    }
    if (value("evaluators_enabled")) {
      params.append("machine_type", value("evaluators_machine_type"));
      params.append("accelerator_type", value("evaluators_accelerator_type"));
    }
    fetch(region.dataset.source + "?" + params.toString(), { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) {
        if (!data) return;
        var current = region.value;
        var names = data.regions.map(function (r) { return r.name; });
        region.innerHTML = "";
        data.regions.forEach(function (r) { region.add(new Option(r.label, r.name)); });
        region.value = names.indexOf(current) >= 0 ? current : data["default"];
        // The validation panel follows the form's changes: it sees the new region too.
        if (region.value !== current) region.dispatchEvent(new Event("change", { bubbles: true }));
      });
  }
  if (region) {
    ["chief_machine_type", "chief_accelerator_type", "workers_enabled", "workers_machine_type",
     "workers_accelerator_type", "evaluators_enabled", "evaluators_machine_type",
     "evaluators_accelerator_type"].forEach(function (name) {
      var el = form.querySelector("[name=" + name + "]");
      if (el) el.addEventListener("change", syncRegions);
    });
  }

  // A refused Submit or Export: the summary of every error is brought into view and focused
  // (a screen reader reads it); each of its links moves to its field.
  var summary = document.getElementById("error-summary");
  if (summary) {
    summary.scrollIntoView({ block: "start" });
    summary.focus({ preventScroll: true });
    summary.addEventListener("click", function (e) {
      var link = e.target.closest("a[href^='#']");
      var target = link && document.getElementById(link.getAttribute("href").slice(1));
      if (!target) return;
      e.preventDefault();
      target.scrollIntoView({ block: "center" });
      if (target.focus) target.focus({ preventScroll: true });
    });
  }

  var start = document.getElementById("start-from");
  if (start) {
    start.addEventListener("change", function () {
      if (start.value) window.location.href = start.value;
    });
  }
})();
