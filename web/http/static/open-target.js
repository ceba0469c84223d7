// A link to a collapsed section (a citation to /profile#pattern-x) opens it, then scrolls to it.
(function () {
  "use strict";
  function openTarget() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    var target = id && document.getElementById(id);
    if (target && target.tagName === "DETAILS") {
      target.open = true;
      target.scrollIntoView();
    }
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
})();
