// Inline validation for forms marked novalidate: a required field left blank is named next to itself as
// soon as focus leaves it, and on submit the first problem gets focus (not for a button marked
// formnovalidate). The server checks again anyway.
(function () {
  "use strict";
  function check(field) {
    var error = document.getElementById("e-" + field.name);
    var blank = field.required && !field.value.trim();
    var tooLong = field.maxLength > 0 && field.value.length > field.maxLength;
    var message = blank ? "must not be blank" : tooLong ? "at most " + field.maxLength + " characters" : "";
    if (error) { error.textContent = message; }
    if (message) { field.setAttribute("aria-invalid", "true"); } else { field.removeAttribute("aria-invalid"); }
    return !message;
  }
  document.querySelectorAll("form[novalidate]").forEach(function (form) {
    var fields = form.querySelectorAll("input[name]:not([type=hidden]), textarea[name]");
    fields.forEach(function (field) {
      field.addEventListener("blur", function () { check(field); });
      field.addEventListener("input", function () { if (field.getAttribute("aria-invalid")) { check(field); } });
    });
    form.addEventListener("submit", function (event) {
      if (event.submitter && event.submitter.formNoValidate) { return; } // e.g. drafting: blanks are expected
      var firstBad = null;
      fields.forEach(function (field) { if (!check(field) && !firstBad) { firstBad = field; } });
      if (firstBad) { event.preventDefault(); firstBad.focus(); }
    });
  });
  var summary = document.getElementById("form-errors");
  if (summary) { summary.focus(); }
})();
