// The console's dialog (quarantine and lift). htmx loads a form into #ops-dialog-body; this
// opens it as a modal, closes it when the server says the action is done (HX-Trigger
// "dialog-done"), and lets a refusal (400, 409, 423) or a typed memory id that names nothing
// (404) be shown inside the dialog: htmx only swaps successful answers by default; Escape
// asks before it discards a half-typed reason. No inline script or hx-on: the page's CSP
// forbids both.
(function () {
  var BODY_ID = "ops-dialog-body";
  var SHOWN_STATUSES = [400, 404, 409, 423];

  function dialog() {
    return document.getElementById("ops-dialog");
  }

  // The submit button stays disabled until the confirmation matches the name exactly; the
  // server checks it again.
  function syncConfirmation(root) {
    root.querySelectorAll("[data-must-match]").forEach(function (input) {
      var button = input.form && input.form.querySelector("button[type=submit]");
      if (button) {
        button.disabled = input.value !== input.getAttribute("data-must-match");
      }
    });
  }

  document.addEventListener("htmx:beforeSwap", function (event) {
    if (event.detail.target && event.detail.target.id === BODY_ID &&
        SHOWN_STATUSES.indexOf(event.detail.xhr.status) !== -1) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });

  document.addEventListener("htmx:afterSwap", function (event) {
    var box = dialog();
    if (!box || event.detail.target.id !== BODY_ID) {
      return;
    }
    if (!box.open) {
      box.showModal();
    }
    syncConfirmation(box);
    var first = box.querySelector("[aria-invalid=true], textarea, input:not([type=hidden])");
    if (first) {
      first.focus();
    }
  });

  document.addEventListener("dialog-done", function () {
    var box = dialog();
    if (box && box.open) {
      box.close();
    }
  });

  document.addEventListener("input", function (event) {
    if (event.target.matches && event.target.matches("[data-must-match]")) {
      syncConfirmation(event.target.form || document);
    }
  });

  document.addEventListener("click", function (event) {
    var closer = event.target.closest && event.target.closest("[data-dialog-close]");
    var box = dialog();
    if (closer && box && box.contains(closer)) {
      box.close();
    }
  });

  // Typed and not sent: a field whose value differs from what the server put in it.
  function halfTyped(box) {
    return Array.from(box.querySelectorAll("textarea, input[type=text], input:not([type])"))
      .some(function (field) {
        return !field.readOnly && field.value.trim() !== "" && field.value !== field.defaultValue;
      });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var box = dialog();
    if (box) {
      // Escape would throw away a half-typed reason: ask first.
      box.addEventListener("cancel", function (event) {
        if (halfTyped(box) && !window.confirm("Discard what you typed in this dialog?")) {
          event.preventDefault();
        }
      });
      // Closed by a button, Escape or the server: empty it, so a stale form never reappears.
      box.addEventListener("close", function () {
        document.getElementById(BODY_ID).innerHTML = "";
      });
    }
  });
})();
