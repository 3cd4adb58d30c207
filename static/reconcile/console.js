// The console's habits: short filter URLs, the theme toggle, the folding menu on phones and
// the keyboard shortcuts. Times and date-time inputs are in times.js. No inline script or
// hx-on anywhere: the page's CSP allows scripts from this origin only.
(function () {
  "use strict";

  // A region that polls (`hx-trigger="every …"`) asks by itself: no activity for the
  // session's idle limit (reconcile_app/console/session_limits.py), as live.js's checks.
  document.addEventListener("htmx:configRequest", function (event) {
    var trigger = event.detail.elt.getAttribute("hx-trigger") || "";
    if (!event.detail.triggeringEvent && /(^|,)\s*every\s/.test(trigger)) {
      event.detail.headers["X-Reconcile-Background"] = "1";
    }
  });

  // Keep filter URLs short and shareable: htmx GETs drop empty fields (a plain form submit,
  // without JavaScript, still works; its URL just lists the empty fields too).
  document.addEventListener("htmx:configRequest", function (event) {
    if (event.detail.verb !== "get") {
      return;
    }
    var data = event.detail.formData;
    if (!data) {
      return;
    }
    Array.from(data.keys()).forEach(function (name) {
      if (data.getAll(name).every(function (value) { return value === ""; })) {
        data.delete(name);
      }
    });
  });

  function remember(key, value) {
    try {
      window.localStorage.setItem(key, value);
    } catch (error) {
      // Storage refused: the choice holds for this page only.
    }
  }

  // --- Theme -----------------------------------------------------------------------------
  var darkQuery = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;

  function currentTheme() {
    var chosen = document.documentElement.getAttribute("data-theme");
    if (chosen === "dark" || chosen === "light") {
      return chosen;
    }
    return darkQuery && darkQuery.matches ? "dark" : "light";
  }

  function showTheme() {
    var button = document.getElementById("theme-toggle");
    var dark = currentTheme() === "dark";
    if (button) {
      // The label names the theme a press gives (no aria-pressed: "Light, pressed" said
      // neither the state nor the action).
      button.textContent = dark ? "Light" : "Dark";
      button.title = dark ? "Switch to the light theme" : "Switch to the dark theme";
    }
    document.dispatchEvent(new CustomEvent("reconcile:theme", { detail: { theme: currentTheme() } }));
  }

  function toggleTheme() {
    var next = currentTheme() === "dark" ? "light" : "dark";
    document.documentElement.setAttribute("data-theme", next);
    remember("reconcile.theme", next);
    showTheme();
  }

  // Plotly figures are built light on the server (charts.py); in the dark theme their
  // neutral colours (paper, ink, grid, axes) are swapped for the dark palette's. Tones that
  // carry meaning (green, red, amber…) stay as they are: they read on both.
  var DARK_FIGURE_COLOURS = {
    "#ffffff": "#1a2029",
    "#17202b": "#e6e9ee",
    "#4b5563": "#b9c1cc",
    "#6b7280": "#9aa4b1",
    "#eef0f3": "#2c343f",
    "#cfd4da": "#3e4754",
    "#b3bac4": "#5b6573"
  };

  function recolour(value) {
    if (typeof value === "string") {
      var swapped = DARK_FIGURE_COLOURS[value.toLowerCase()];
      return swapped || value;
    }
    if (Array.isArray(value)) {
      return value.map(recolour);
    }
    if (value && typeof value === "object") {
      var copy = {};
      Object.keys(value).forEach(function (key) { copy[key] = recolour(value[key]); });
      return copy;
    }
    return value;
  }

  // The figure as the current theme draws it (a copy; the source is left as it was).
  window.reconcileThemedFigure = function (figure) {
    return currentTheme() === "dark" ? recolour(figure) : figure;
  };

  if (darkQuery && darkQuery.addEventListener) {
    darkQuery.addEventListener("change", showTheme);
  }

  // --- Menu on narrow screens ---------------------------------------------------------------
  function setMenu(open) {
    var menu = document.getElementById("topbar-menu");
    var toggle = document.getElementById("nav-toggle");
    if (!menu || !toggle) {
      return;
    }
    menu.classList.toggle("open", open);
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
  }

  // Without JavaScript the Menu is a link to the menu (shown as the :target); here it becomes
  // a button that folds the menu open and shut and says which (aria-expanded).
  function upgradeMenu() {
    var toggle = document.getElementById("nav-toggle");
    if (!toggle) {
      return;
    }
    toggle.setAttribute("role", "button");
    toggle.setAttribute("aria-controls", "topbar-menu");
    toggle.setAttribute("aria-expanded", "false");
    if (window.location.hash === "#topbar-menu") {
      // Reached as the :target (say, a reload after opening it without JavaScript): keep it
      // open, now as the button's state, so closing it works the same way.
      window.history.replaceState(null, "", window.location.pathname + window.location.search);
      setMenu(true);
    }
  }

  function toggleMenu() {
    setMenu(!document.getElementById("topbar-menu").classList.contains("open"));
  }

  function menuHidden() {
    var menu = document.getElementById("topbar-menu");
    return !!menu && window.getComputedStyle(menu).display === "none";
  }

  // --- Boxes that scroll ---------------------------------------------------------------------
  // A wide table or a long line of text scrolls inside its own box rather than widening the
  // page; a keyboard can scroll that box only if it takes focus. One with a link, a button or
  // a field inside already does; the others get a tab stop while (and only while) they scroll.
  var SCROLL_BOXES = ".table-scroll, pre";
  var FOCUSABLE = "a[href], button, input, select, textarea, [tabindex]:not([data-scroll-stop])";

  function scrollStops(root) {
    var scope = root && root.querySelectorAll ? root : document;
    var boxes = Array.from(scope.querySelectorAll(SCROLL_BOXES));
    if (scope.matches && scope.matches(SCROLL_BOXES)) {
      boxes.push(scope);
    }
    boxes.forEach(function (box) {
      var scrolls = box.scrollWidth > box.clientWidth + 1 || box.scrollHeight > box.clientHeight + 1;
      var owned = box.hasAttribute("data-scroll-stop");
      if (scrolls && !owned && !box.hasAttribute("tabindex") && !box.querySelector(FOCUSABLE)) {
        box.setAttribute("tabindex", "0");
        box.setAttribute("data-scroll-stop", "");
      } else if (!scrolls && owned) {
        box.removeAttribute("tabindex");
        box.removeAttribute("data-scroll-stop");
      }
    });
  }

  var resizeWait = null;
  window.addEventListener("resize", function () {
    window.clearTimeout(resizeWait);
    resizeWait = window.setTimeout(function () { scrollStops(document); }, 200);
  });
  document.addEventListener("htmx:load", function (event) {
    if (document.readyState !== "loading") {
      scrollStops(event.detail && event.detail.elt);
    }
  });

  // --- Keyboard shortcuts --------------------------------------------------------------------
  var GO_WAIT_MS = 1500;
  var goPending = null;

  function typingIn(element) {
    return !!(element && element.closest &&
      element.closest("input, textarea, select, [contenteditable=''], [contenteditable=true]"));
  }

  function openShortcuts() {
    var box = document.getElementById("shortcuts-dialog");
    if (box && !box.open) {
      box.showModal();
    }
  }

  function visible(element) {
    return !!(element.offsetWidth || element.offsetHeight || element.getClientRects().length);
  }

  function focusSearch() {
    var search = Array.from(document.querySelectorAll("main input[type=search]")).filter(visible)[0];
    if (!search) {
      if (menuHidden()) {
        setMenu(true);
      }
      search = document.getElementById("goto-q");
    }
    if (search) {
      search.focus();
      search.select();
    }
  }

  function tableRows() {
    return Array.from(document.querySelectorAll("main table.data-table > tbody > tr"))
      .filter(function (row) { return !row.classList.contains("empty") && visible(row); });
  }

  function moveCursor(step) {
    var rows = tableRows();
    if (!rows.length) {
      return;
    }
    var current = rows.findIndex(function (row) { return row.classList.contains("row-cursor"); });
    var next = current === -1 ? (step > 0 ? 0 : rows.length - 1)
      : Math.min(rows.length - 1, Math.max(0, current + step));
    rows.forEach(function (row) { row.classList.remove("row-cursor"); });
    var row = rows[next];
    row.classList.add("row-cursor");
    if (!row.hasAttribute("tabindex")) {
      row.setAttribute("tabindex", "-1");
    }
    row.focus({ preventScroll: true });
    row.scrollIntoView({ block: "nearest" });
  }

  function openCursorRow() {
    var row = document.querySelector("main tr.row-cursor");
    if (!row || document.activeElement !== row) {
      return false;
    }
    var link = row.querySelector("a[href]");
    if (link) {
      link.click();
      return true;
    }
    return false;
  }

  function go(letter) {
    var link = document.querySelector("[data-go-key='" + letter + "']");
    if (link) {
      window.location.assign(link.href);
    }
  }

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) {
      return;
    }
    if (typingIn(event.target)) {
      if (event.key === "Escape" && event.target.id === "goto-q") {
        event.target.blur();
      }
      return;
    }
    if (event.key === " " && event.target.id === "nav-toggle") {
      event.preventDefault(); // a button answers Space as well as Enter
      toggleMenu();
      return;
    }
    if (document.querySelector("dialog[open]")) {
      return; // a dialog has the keyboard (Escape closes it)
    }
    if (goPending) {
      window.clearTimeout(goPending);
      goPending = null;
      if (/^[a-z]$/.test(event.key)) {
        event.preventDefault();
        go(event.key);
      }
      return;
    }
    switch (event.key) {
      case "?":
        event.preventDefault();
        openShortcuts();
        break;
      case "/":
        event.preventDefault();
        focusSearch();
        break;
      case "j":
        event.preventDefault();
        moveCursor(1);
        break;
      case "k":
        event.preventDefault();
        moveCursor(-1);
        break;
      case "g":
        goPending = window.setTimeout(function () { goPending = null; }, GO_WAIT_MS);
        break;
      case "Enter":
        if (openCursorRow()) {
          event.preventDefault();
        }
        break;
      default:
        break;
    }
  });

  document.addEventListener("click", function (event) {
    var target = event.target.closest ? event.target : event.target.parentElement;
    if (!target) {
      return;
    }
    if (target.closest("#theme-toggle")) {
      toggleTheme();
    } else if (target.closest("#nav-toggle")) {
      event.preventDefault(); // the button's job, not the no-JavaScript link's
      toggleMenu();
    } else if (target.closest(".nav-close")) {
      event.preventDefault();
      setMenu(false);
      document.getElementById("nav-toggle").focus();
    } else if (target.closest("#shortcuts-open")) {
      openShortcuts();
    } else if (target.closest("[data-shortcuts-close]")) {
      document.getElementById("shortcuts-dialog").close();
    }
  });

  document.addEventListener("DOMContentLoaded", function () {
    showTheme();
    upgradeMenu();
    scrollStops(document);
  });
})();
