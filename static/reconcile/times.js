// Times as the reader chose: UTC (the default, as the server renders them), local (this
// browser's zone) or relative ("5 min ago"). The server writes every time as
// <time datetime="…Z">YYYY-MM-DD HH:MM:SS</time> in UTC and states the zone in words next to
// it: "(UTC)" in a heading or label, or " UTC" right after the time. This rewrites both, so a
// page never shows a local time under a "UTC" heading.
//
// Date-time inputs (datetime-local, which carries no zone) follow the same choice: in UTC mode
// they hold UTC; otherwise they hold local time, their label says which zone, and the value is
// converted to UTC when the form is sent, so the server always receives UTC and reads it so.
(function () {
  "use strict";

  var MODES = ["utc", "local", "relative"];
  var STORE = "reconcile.timeMode";
  var ZONE = (window.Intl && Intl.DateTimeFormat().resolvedOptions().timeZone) || "local time";
  var mode = "utc";
  try {
    mode = window.localStorage.getItem(STORE) || "utc";
  } catch (error) {
    mode = "utc";
  }
  if (MODES.indexOf(mode) === -1) {
    mode = "utc";
  }

  function pad(number) {
    return (number < 10 ? "0" : "") + number;
  }

  function wall(date, utc, seconds) {
    var parts = utc
      ? [date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate(), date.getUTCHours(), date.getUTCMinutes(), date.getUTCSeconds()]
      : [date.getFullYear(), date.getMonth() + 1, date.getDate(), date.getHours(), date.getMinutes(), date.getSeconds()];
    var text = parts[0] + "-" + pad(parts[1]) + "-" + pad(parts[2]) + "T" + pad(parts[3]) + ":" + pad(parts[4]);
    return seconds ? text + ":" + pad(parts[5]) : text;
  }

  function relative(date) {
    var seconds = Math.round((date.getTime() - Date.now()) / 1000);
    var size = Math.abs(seconds);
    var units = [["year", 31536000], ["month", 2592000], ["day", 86400], ["hour", 3600], ["minute", 60]];
    var format = new Intl.RelativeTimeFormat("en", { numeric: "auto", style: "short" });
    for (var i = 0; i < units.length; i += 1) {
      if (size >= units[i][1]) {
        return format.format(Math.trunc(seconds / units[i][1]), units[i][0]);
      }
    }
    return format.format(seconds, "second");
  }

  // --- Rendered times ----------------------------------------------------------------------
  function renderTime(element) {
    var iso = element.getAttribute("datetime");
    var date = iso ? new Date(iso) : null;
    if (!date || isNaN(date.getTime()) || iso.indexOf("T") === -1) {
      return; // a date without a time reads the same everywhere
    }
    if (!element.hasAttribute("data-utc-text")) {
      element.setAttribute("data-utc-text", element.textContent);
    }
    var utcText = element.getAttribute("data-utc-text");
    var exact = iso.replace("+00:00", "Z");
    if (mode === "utc") {
      element.textContent = utcText;
      element.title = exact;
    } else if (mode === "local") {
      element.textContent = wall(date, false, true).replace("T", " ");
      element.title = exact + " (" + utcText + " UTC)";
    } else {
      element.textContent = relative(date);
      element.title = exact + " (" + utcText + " UTC)";
    }
  }

  function zoneWord(kind) {
    if (mode === "utc") {
      return "UTC";
    }
    if (kind === "input" || mode === "local") {
      return ZONE;
    }
    return kind === "suffix" ? "" : "relative";
  }

  // Wrap each "UTC" that states a zone (in a heading, a label, or right after a time) once.
  function markZoneWords(root) {
    var walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    var found = [];
    var node = walker.nextNode();
    while (node) {
      var parent = node.parentElement;
      if (parent && /\bUTC\b/.test(node.nodeValue) && !parent.closest("[data-zone-label], select, script, option, textarea")) {
        var afterTime = node.previousSibling && node.previousSibling.nodeName === "TIME";
        var heading = parent.closest("th, h1, h2, h3, label, dt, figcaption, legend");
        if (afterTime || heading) {
          found.push([node, afterTime ? "suffix" : "head"]);
        }
      }
      node = walker.nextNode();
    }
    found.forEach(function (item) {
      var text = item[0];
      var pieces = text.nodeValue.split(/\bUTC\b/);
      var fragment = document.createDocumentFragment();
      pieces.forEach(function (piece, index) {
        if (index > 0) {
          var word = document.createElement("span");
          var label = text.parentElement.closest("label");
          var input = label && label.htmlFor ? document.getElementById(label.htmlFor) : null;
          word.setAttribute("data-zone-label", input && input.type === "datetime-local" ? "input" : item[1]);
          word.textContent = "UTC";
          fragment.appendChild(word);
        }
        fragment.appendChild(document.createTextNode(piece));
      });
      text.parentNode.replaceChild(fragment, text);
    });
  }

  // --- Date-time inputs ----------------------------------------------------------------------
  function toUtc(value) {
    var match = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?/.exec(value || "");
    if (!match) {
      return value;
    }
    var local = new Date(+match[1], +match[2] - 1, +match[3], +match[4], +match[5], +(match[6] || 0));
    return wall(local, true, true);
  }

  function toLocal(value, seconds) {
    var match = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?/.exec(value || "");
    if (!match) {
      return value;
    }
    var instant = new Date(Date.UTC(+match[1], +match[2] - 1, +match[3], +match[4], +match[5], +(match[6] || 0)));
    return wall(instant, false, seconds || !!match[6]);
  }

  function inputZone() {
    return mode === "utc" ? "utc" : "local";
  }

  function prepareInput(input) {
    var label = input.id ? document.querySelector("label[for='" + input.id + "']") : null;
    if (label && !label.querySelector("[data-zone-label]")) {
      // Every date-time input states its zone: add it where the label did not.
      var note = document.createElement("span");
      note.className = "zone-note muted";
      note.appendChild(document.createTextNode(" ("));
      var word = document.createElement("span");
      word.setAttribute("data-zone-label", "input");
      word.textContent = "UTC";
      note.appendChild(word);
      note.appendChild(document.createTextNode(")"));
      label.appendChild(note);
    }
    var zone = input.getAttribute("data-zone") || "utc";  // as the server rendered it
    var wanted = inputZone();
    if (zone !== wanted && input.value) {
      var seconds = input.step === "1";
      input.value = wanted === "local" ? toLocal(input.value, seconds) : toUtc(input.value).slice(0, seconds ? 19 : 16);
    }
    input.setAttribute("data-zone", wanted);
  }

  // htmx sends the form: local values leave as UTC (the input keeps showing local time).
  document.addEventListener("htmx:configRequest", function (event) {
    var data = event.detail.formData;
    var source = event.detail.elt;
    var scope = (source && (source.form || source.closest && source.closest("form"))) || document;
    if (!data) {
      return;
    }
    scope.querySelectorAll("input[type=datetime-local][data-zone=local][name]").forEach(function (input) {
      if (data.has(input.name) && input.value) {
        data.set(input.name, toUtc(input.value));
      }
    });
  });

  // A plain submit (no htmx): send a hidden UTC copy instead of the local value.
  document.addEventListener("submit", function (event) {
    if (event.defaultPrevented) {
      return;
    }
    event.target.querySelectorAll("input[type=datetime-local][data-zone=local][name]").forEach(function (input) {
      if (!input.value) {
        return;
      }
      var copy = document.createElement("input");
      copy.type = "hidden";
      copy.name = input.name;
      copy.value = toUtc(input.value);
      input.removeAttribute("name");
      event.target.appendChild(copy);
    });
  });

  // --- Apply -------------------------------------------------------------------------------
  function apply(root) {
    markZoneWords(root);
    root.querySelectorAll("input[type=datetime-local]").forEach(prepareInput);
    root.querySelectorAll("time[datetime]").forEach(renderTime);
    document.querySelectorAll("[data-zone-label]").forEach(function (word) {
      word.textContent = zoneWord(word.getAttribute("data-zone-label"));
    });
    var select = document.getElementById("time-mode");
    if (select) {
      select.value = mode;
    }
    document.documentElement.setAttribute("data-time-mode", mode);
  }

  document.addEventListener("change", function (event) {
    if (event.target.id !== "time-mode" || MODES.indexOf(event.target.value) === -1) {
      return;
    }
    mode = event.target.value;
    try {
      window.localStorage.setItem(STORE, mode);
    } catch (error) {
      // Storage refused: the choice holds for this page only.
    }
    apply(document.body);
  });

  document.addEventListener("DOMContentLoaded", function () {
    apply(document.body);
    // Relative times age: refresh them while the page is open.
    window.setInterval(function () {
      if (mode === "relative") {
        document.querySelectorAll("time[datetime]").forEach(renderTime);
      }
    }, 30000);
  });
  document.addEventListener("htmx:load", function (event) {
    if (document.readyState !== "loading" && event.detail && event.detail.elt && event.detail.elt.querySelectorAll) {
      apply(event.detail.elt);
    }
  });
})();
