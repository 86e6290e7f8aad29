// Shows every <time data-local> in the viewer's time zone, and names the
// zone in every [data-zone]. The server writes UTC, which stays in each
// time's title (and is what the page shows without JavaScript).
(function () {
  "use strict";
  function pad(n) { return String(n).padStart(2, "0"); }
  function show() {
    document.querySelectorAll("time[data-local]").forEach(function (el) {
      var d = new Date(el.getAttribute("datetime"));
      if (isNaN(d.getTime())) { return; }
      el.textContent = d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " +
        pad(d.getHours()) + ":" + pad(d.getMinutes()) + ":" + pad(d.getSeconds());
      el.removeAttribute("data-local");
    });
    var zone = Intl.DateTimeFormat().resolvedOptions().timeZone || "local time";
    document.querySelectorAll("[data-zone]").forEach(function (el) { el.textContent = zone; });
  }
  document.addEventListener("DOMContentLoaded", show);
  // htmx replaces the results of a filter or a page turn.
  document.addEventListener("htmx:afterSettle", show);
})();
