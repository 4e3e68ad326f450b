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
