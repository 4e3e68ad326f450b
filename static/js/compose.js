// Compose page: the workers pool's fields are dimmed while the pool is switched off, so it is
// clear they are ignored; they stay in the form so switching back on keeps what was typed.
(function () {
  "use strict";
  var pool = document.getElementById("workers-pool");
  if (!pool) return;
  var toggle = document.getElementById(pool.dataset.toggle);
  if (!toggle) return;
  function sync() {
    pool.classList.toggle("off", !toggle.checked);
  }
  toggle.addEventListener("change", sync);
  sync();
})();
