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

  document.addEventListener("htmx:afterSwap", refresh);
  document.addEventListener("DOMContentLoaded", refresh);
})();
