// Keyboard focus across htmx swaps. A swap that replaces the focused element (a tab, a sort
// or page link, a row's form, the overview's live refresh every few seconds) leaves focus on
// <body>: a keyboard or screen-reader user is thrown back to the top of the page. htmx keeps
// focus only on an element with an id; here focus goes to the same control in the new content
// (found by its link or its text), to a field the answer marks invalid, or else to the nearest
// swapped container, so the next Tab starts where the reader was.
(function () {
  "use strict";

  var FOCUSABLE = "a[href], button:not([disabled]), input:not([type=hidden]):not([disabled]), " +
    "select:not([disabled]), textarea:not([disabled]), summary, [tabindex]";
  var lost = null;

  function label(element) {
    return (element.textContent || "").replace(/\s+/g, " ").trim();
  }

  function shown(element) {
    return !!(element.offsetWidth || element.offsetHeight || element.getClientRects().length);
  }

  // The focused element, if the swap about to happen removes it: where it sat (the nearest
  // ancestor with an id, which the new content carries too) and how to know it again.
  document.addEventListener("htmx:beforeSwap", function (event) {
    var focused = document.activeElement;
    var target = event.detail.target;
    lost = null;
    if (!focused || focused === document.body || !target || !target.contains(focused)) {
      return;
    }
    var home = focused.parentElement && focused.parentElement.closest("[id]");
    lost = {
      home: home ? home.id : null,
      target: target.id || null,
      tag: focused.tagName,
      href: focused.getAttribute("href"),
      text: label(focused),
    };
  });

  function sameControl(scope, was) {
    var candidates = Array.from(scope.querySelectorAll(FOCUSABLE)).filter(shown);
    return candidates.filter(function (e) { return was.href && e.getAttribute("href") === was.href; })[0] ||
      candidates.filter(function (e) { return e.tagName === was.tag && was.text && label(e) === was.text; })[0];
  }

  document.addEventListener("htmx:afterSettle", function () {
    var was = lost;
    lost = null;
    if (!was || (document.activeElement && document.activeElement !== document.body)) {
      return; // focus survived the swap (htmx kept it by id, or the reader moved on)
    }
    var home = (was.home && document.getElementById(was.home)) ||
      (was.target && document.getElementById(was.target));
    if (!home || document.querySelector("dialog[open]")) {
      return;
    }
    var next = home.querySelector("[aria-invalid=true]") || sameControl(home, was);
    if (!next) {
      next = home;
      if (!next.hasAttribute("tabindex")) {
        next.setAttribute("tabindex", "-1");
      }
      if (next.tagName === "TR") {
        next.classList.add("row-cursor"); // shown as the keyboard cursor's row (j / k)
      }
    }
    next.focus({ preventScroll: true });
  });
})();
