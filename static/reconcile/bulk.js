// Bulk triage on a list page: the header box ticks every row on the page, ticking a row
// chooses "the rows I tick", and the bar says how many are ticked. Delegated from the
// document so it keeps working after htmx swaps the table in.
(function () {
  function boxes() {
    return Array.from(document.querySelectorAll("input.bulk-pick[form=bulk-form]"));
  }

  function refresh() {
    var picked = boxes().filter(function (box) { return box.checked; }).length;
    var note = document.querySelector("#bulk-form .bulk-picked");
    if (note) {
      note.textContent = picked ? "(" + picked + " ticked)" : "(none yet)";
    }
    var all = document.querySelector("input.bulk-pick-all");
    if (all) {
      var total = boxes().length;
      all.checked = total > 0 && picked === total;
      all.indeterminate = picked > 0 && picked < total;
    }
  }

  document.addEventListener("change", function (event) {
    var target = event.target;
    if (!(target instanceof HTMLInputElement)) {
      return;
    }
    if (target.classList.contains("bulk-pick-all")) {
      boxes().forEach(function (box) { box.checked = target.checked; });
    } else if (!target.classList.contains("bulk-pick")) {
      return;
    }
    var selected = document.getElementById("bulk-scope-selected");
    if (selected) {
      selected.checked = true;
    }
    refresh();
  });

  // A URL longer than this may be refused before the console sees it (gunicorn's request
  // line stops at 4094 bytes: a hundred ticked client-made keys pass it). The preview is
  // then posted, with the page's CSRF token; nothing changes until it is confirmed.
  var LONGEST_URL = 2000;

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!(form instanceof HTMLFormElement) || form.id !== "bulk-form") {
      return;
    }
    var query = new URLSearchParams(new FormData(form)).toString();
    if (form.action.length + 1 + query.length <= LONGEST_URL) {
      return;
    }
    var headers = JSON.parse(document.body.getAttribute("hx-headers") || "{}");
    [["csrfmiddlewaretoken", headers["X-CSRFToken"] || ""], ["preview", "1"]].forEach(
      function (pair) {
        var input = document.createElement("input");
        input.type = "hidden";
        input.name = pair[0];
        input.value = pair[1];
        form.appendChild(input);
      }
    );
    form.method = "post";
  });

  document.addEventListener("htmx:afterSwap", refresh);
  document.addEventListener("DOMContentLoaded", refresh);
})();
