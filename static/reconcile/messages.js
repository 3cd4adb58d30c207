// Confirmations for actions taken through htmx. The page is not reloaded, so a Django message
// would wait for the next page: the server sends `HX-Trigger: {"console-message": {"level",
// "text"}}` and the message joins the page's list of messages (created if the page has none),
// announced to screen readers by the list's polite live region.
//
// A message with a `key` stands for a state, not an event (the server's fault answers,
// server_errors.py): the page holds one message per key. The same message again leaves it as
// it is, so a live view refreshing through an outage is announced once, not on every
// attempt; a different one replaces it. With `until_success`, the next request that succeeds
// takes it away: the outage is over.
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

  function keyed(key) {
    return Array.prototype.filter.call(
      document.querySelectorAll("main .messages li[data-message-key]"),
      function (item) {
        return item.getAttribute("data-message-key") === key;
      }
    );
  }

  document.body.addEventListener("console-message", function (event) {
    var detail = event.detail || {};
    if (!detail.text) {
      return;
    }
    var level = LEVELS[detail.level] ? detail.level : "info";
    var text = detail.ref ? detail.text + " (request " + detail.ref + ")" : detail.text;
    if (detail.key) {
      var earlier = keyed(detail.key);
      var same = earlier.some(function (item) {
        return item.getAttribute("data-message-text") === detail.text;
      });
      if (same) {
        return;
      }
      earlier.forEach(function (item) {
        item.remove();
      });
    }
    var messages = list();
    messages.setAttribute("role", "status");
    messages.setAttribute("aria-live", "polite");
    var item = document.createElement("li");
    item.className = "message message-" + level;
    item.textContent = text; // text, never markup
    if (detail.key) {
      item.setAttribute("data-message-key", detail.key);
      item.setAttribute("data-message-text", detail.text);
      if (detail.until_success) {
        item.setAttribute("data-until-success", "true");
      }
    }
    messages.appendChild(item);
  });

  document.body.addEventListener("htmx:afterRequest", function (event) {
    if (!event.detail || !event.detail.successful) {
      return;
    }
    document.querySelectorAll("main .messages li[data-until-success]").forEach(function (item) {
      item.remove();
    });
  });
})();
