// Keeps a section current without a full reload: every data-refresh seconds the page is fetched again and
// the element with the same id is swapped in. It pauses while the tab is hidden or focus is inside the
// section (never pulling a link out from under the keyboard), and stops once the fresh copy no longer
// asks to be refreshed (a briefing that has arrived, an operation that has finished).
(function () {
  "use strict";
  function watch(section) {
    var seconds = Math.max(parseInt(section.getAttribute("data-refresh"), 10) || 15, 1);
    function schedule() { window.setTimeout(tick, seconds * 1000); }
    function tick() {
      if (document.hidden || section.contains(document.activeElement)) { return schedule(); }
      fetch(window.location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } })
        .then(function (response) {
          if (response.redirected || !response.ok) { throw new Error("refresh: " + response.status); }
          return response.text();
        })
        .then(function (html) {
          var fresh = new DOMParser().parseFromString(html, "text/html").getElementById(section.id);
          if (!fresh) { return schedule(); }
          section.replaceWith(fresh);
          section = fresh;
          if (fresh.hasAttribute("data-refresh")) { schedule(); }
        })
        .catch(schedule);
    }
    schedule();
  }
  document.querySelectorAll("[data-refresh]").forEach(watch);
})();
