// Compose page: optional pools are dimmed while switched off (their fields stay in the form, so
// switching back on keeps what was typed); strategy settings show for their strategy only;
// "Start from" opens the chosen preset or template.
(function () {
  "use strict";
  var form = document.getElementById("compose-form");
  if (!form) return;

  function dim(el, off) {
    el.style.opacity = off ? "0.45" : "";
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

  var start = document.getElementById("start-from");
  if (start) {
    start.addEventListener("change", function () {
      if (start.value) window.location.href = start.value;
    });
  }
})();
