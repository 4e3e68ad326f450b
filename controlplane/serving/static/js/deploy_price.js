// The endpoint page's deploy form: the hourly price of what is chosen, for the chosen replica
// counts, from the prices the server put on the menus' options (data-micros, per replica or
// per GPU, integer micro-dollars; controlplane/serving/hardware.py); and, for a model whose
// runtime runs only on one GPU (tensorrt), only the machines that take it. The server checks
// all of it again on submit.
(function () {
  "use strict";

  function usd(micros) {
    var dollars = micros / 1e6;
    if (dollars >= 1 || dollars === 0) {
      return "$" + dollars.toLocaleString("en-US", {minimumFractionDigits: 2,
                                                   maximumFractionDigits: 2});
    }
    return "$" + Number(dollars.toPrecision(2)).toString();
  }

  function chosen(select) {
    return select ? select.options[select.selectedIndex] : null;
  }

  function update(form) {
    var out = form.querySelector("#deploy-price");
    var machine = chosen(form.elements.machine_type);
    var model = chosen(form.elements.model);
    var gpu = chosen(form.elements.accelerator_type);
    var onlyGpu = model ? model.dataset.gpu || "" : "";
    Array.prototype.forEach.call(form.elements.machine_type.options, function (option) {
      option.hidden = onlyGpu !== "" &&
        (option.dataset.gpus || "").split(",").indexOf(onlyGpu) < 0;
    });
    if (!out || !machine) { return; }
    if (!machine.dataset.micros) {
      out.textContent = "No price for " + machine.value + " in the price table.";
      return;
    }
    var perReplica = Number(machine.dataset.micros);
    var count = Number(form.elements.accelerator_count.value) || 0;
    if (machine.dataset.takesGpus && gpu && gpu.value && count) {
      if (!gpu.dataset.micros) {
        out.textContent = "No price for " + gpu.value + " in the price table.";
        return;
      }
      perReplica += Number(gpu.dataset.micros) * count;
    }
    var low = Math.max(1, Number(form.elements.min_replicas.value) || 1);
    var high = Math.max(low, Number(form.elements.max_replicas.value) || low);
    out.textContent = "Price: " + usd(perReplica * low) + "/h at " + low + " replica" +
      (low === 1 ? "" : "s") + (high > low ? ", up to " + usd(perReplica * high) + "/h at " +
      high : "") + " (" + usd(perReplica) + "/h each).";
  }

  document.addEventListener("DOMContentLoaded", function () {
    var form = document.getElementById("deploy-form");
    if (!form || !form.elements.machine_type) { return; }
    form.addEventListener("change", function () { update(form); });
    form.addEventListener("input", function () { update(form); });
    update(form);
  });
})();
