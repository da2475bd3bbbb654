// Progressive enhancement only: every page works without this file.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  // A changed drop-down applies the filters at once.
  document.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
    select.addEventListener("change", function () {
      if (select.form) { select.form.requestSubmit(); }
    });
  });
  // "/" jumps to the search or question field, as on many sites.
  var target = document.querySelector("[data-focus-key='/']");
  document.addEventListener("keydown", function (event) {
    var typing = /^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement.tagName);
    if (target && event.key === "/" && !typing) {
      event.preventDefault();
      target.focus();
    }
  });
});
