// Keeps the warning beside each key path's input in step with the impact
// report: while the admin types, htmx replaces only the preview (so that
// the focused input stays), and the report's path rows say which paths
// read nothing in the replayed messages. Without JavaScript every change
// renders the whole page, warnings included.
(function () {
  "use strict";
  function update() {
    document.querySelectorAll(".path-warning").forEach(function (warning) {
      var index = warning.id.replace(/^path-(\d+)-unmatched$/, "$1");
      var row = document.querySelector('#impact-paths tr[data-path-index="' + index + '"]');
      var text = row === null ? "" : row.getAttribute("data-warning-text");
      if (text) {
        warning.querySelector(".path-warning-text").textContent = text;
      }
      warning.hidden = !text;
    });
  }
  document.addEventListener("htmx:afterSettle", update);
})();
