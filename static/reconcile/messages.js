// Confirmations for actions taken through htmx. The page is not reloaded, so a Django message
// would wait for the next page: the server sends `HX-Trigger: {"console-message": {"level",
// "text"}}` and the message joins the page's list of messages (created if the page has none),
// announced to screen readers by the list's polite live region. A message with a `key` replaces
// the page's earlier one of that key: a live view refreshing through an outage keeps one
// message, the latest, not one per attempt.
(function () {
  "use strict";

  var LEVELS = { success: true, info: true, warning: true, error: true };

  function list() {
    var found = document.querySelector("main .messages");
    if (found) {
      return found;
    }
    var created = document.createElement("ul");
    created.className = "messages";
    var main = document.querySelector("main") || document.body;
    main.insertBefore(created, main.firstChild);
    return created;
  }

  document.body.addEventListener("console-message", function (event) {
    var detail = event.detail || {};
    if (!detail.text) {
      return;
    }
    var messages = list();
    messages.setAttribute("role", "status");
    messages.setAttribute("aria-live", "polite");
    if (detail.key) {
      messages.querySelectorAll("li[data-message-key]").forEach(function (earlier) {
        if (earlier.getAttribute("data-message-key") === detail.key) {
          earlier.remove();
        }
      });
    }
    var item = document.createElement("li");
    var level = LEVELS[detail.level] ? detail.level : "info";
    item.className = "message message-" + level;
    item.textContent = detail.text; // text, never markup
    if (detail.key) {
      item.setAttribute("data-message-key", detail.key);
    }
    messages.appendChild(item);
  });
})();
