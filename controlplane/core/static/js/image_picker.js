// The serving image picker: fills the datalist named by an input's `list` with the images each
// of the user's teams may pick (GET /api/v1/serving/images/?team=), newest tags first.
(function () {
  "use strict";
  var TAGS_OFFERED = 10;

  function fill(input) {
    var list = document.getElementById(input.getAttribute("list"));
    var teams = (input.dataset.teams || "").split(",").filter(Boolean);
    if (!list || !teams.length) { return; }
    teams.forEach(function (team) {
      fetch(input.dataset.url + "?team=" + encodeURIComponent(team),
            {credentials: "same-origin", headers: {Accept: "application/json"}})
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (body) {
          if (!body) { return; }
          body.images.forEach(function (image) {
            image.tags.slice(0, TAGS_OFFERED).forEach(function (tag) {
              var option = document.createElement("option");
              option.value = image.uri + ":" + tag;
              option.label = (image.source === "team" ? team : "Google prebuilt");
              list.appendChild(option);
            });
          });
        })
        .catch(function () { /* the input still takes any image typed in */ });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("input[list][data-url]").forEach(fill);
  });
})();
