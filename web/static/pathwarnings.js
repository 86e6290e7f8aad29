// Keeps what is said beside each field in step with the preview: while
// the admin types, htmx replaces only the preview (so that the focused
// input stays). The impact report's path rows say which paths read
// nothing in the replayed messages, and the preview's list of problems
// names the field of each, which is then shown beside that field too.
// Without JavaScript every change renders the whole page, warnings and
// problems included.
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
  // The fields whose problems the preview lists (settingsProblems in
  // web/admin_types.go); the code and the tenant are checked on saving.
  var settings = /^(paths|path-\d+|window|sample-size)-problem$/;
  function showProblems() {
    var list = document.querySelector("#preview-problems");
    document.querySelectorAll("#type-form small.problem").forEach(function (problem) {
      if (!settings.test(problem.id)) {
        return;
      }
      var item = list === null ? null : list.querySelector('li[data-field="' + problem.id + '"]');
      problem.textContent = item === null ? "" : item.textContent;
      problem.hidden = item === null;
    });
  }
  document.addEventListener("htmx:afterSettle", update);
  document.addEventListener("htmx:afterSettle", showProblems);
})();
