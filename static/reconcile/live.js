// Live queues and the live overview (see reconcile_app/console/live.py).
//
// Every `[data-live]` bar on the page is asked about every `data-live-seconds`, unless the
// reader paused live updates (remembered in this browser's localStorage) or the tab is hidden:
// - mode "marker" (a queue): fetch the poll URL (JSON: new, entered, gone, changed) and offer
//   "n new · m gone — show";
//   the rows are re-read only when the reader clicks, so nothing moves under the cursor;
// - mode "swap" (the overview): re-read the region in place (its cards have no cursor to lose).
// One interval serves every bar present at each tick, so a bar swapped in by htmx needs no
// set-up and a bar swapped out leaves no timer behind.
(function () {
  "use strict";

  var PAUSED_KEY = "reconcile:live-paused";
  var TICK_MS = 1000;

  function paused() {
    try {
      return window.localStorage.getItem(PAUSED_KEY) === "1";
    } catch (error) {
      return false; // storage refused (private mode): live, the default
    }
  }

  function remember(isPaused) {
    try {
      if (isPaused) {
        window.localStorage.setItem(PAUSED_KEY, "1");
      } else {
        window.localStorage.removeItem(PAUSED_KEY);
      }
    } catch (error) {
      // Not remembered; the bar still shows the state for this page.
    }
  }

  function render(bar) {
    var isPaused = paused();
    var toggle = bar.querySelector("[data-live-toggle]");
    var state = bar.querySelector("[data-live-state]");
    bar.classList.toggle("is-paused", isPaused);
    if (toggle) {
      toggle.hidden = false;
      // The label says what a press does; no aria-pressed beside it: a reader heard
      // "Resume live updates, pressed" for a page that was paused.
      toggle.textContent = isPaused ? "Resume live updates" : "Pause live updates";
    }
    if (state) {
      state.textContent = isPaused
        ? "Paused: this page is not refreshing"
        : "Live: checks every " + bar.getAttribute("data-live-seconds") + " s";
    }
  }

  function plural(count, word) {
    return count + " " + word;
  }

  // The poll says what changed against the page's watermark (live.py `_changes`): rows created
  // since, older rows that came into the filter, rows that left it.
  function showMarker(bar, figures) {
    var button = bar.querySelector("[data-live-show]");
    if (!button) {
      return;
    }
    var added = (figures["new"] || 0) + (figures.entered || 0);
    var gone = figures.gone || 0;
    var parts = [];
    if (added) {
      parts.push(plural(added, "new"));
    }
    if (gone) {
      parts.push(plural(gone, "gone"));
    }
    if (!parts.length && figures.changed) {
      // As many came as went: the count hides it, the digest does not.
      parts.push("listed rows changed");
    }
    if (!parts.length) {
      button.hidden = true;
      return;
    }
    var text = parts.join(" · ") + " — show";
    // The button sits in a live region: rewriting it, even with the same words, is a change
    // a screen reader announces again at every poll. Only news is written.
    if (button.textContent !== text) {
      button.textContent = text;
    }
    button.hidden = false;
  }

  // What the page asks by itself, not the reader: no activity for the session's idle limit
  // (reconcile_app/console/session_limits.py), which answers it with HX-Redirect to sign-in
  // once the session has ended.
  var BY_ITSELF = { "X-Reconcile-Background": "1" };

  function reload(bar, byItself) {
    var target = document.querySelector(bar.getAttribute("data-live-region"));
    var url = bar.getAttribute("data-live-reload");
    if (!target || !url || !window.htmx) {
      window.location.reload();
      return;
    }
    bar.setAttribute("data-live-busy", "true");
    window.htmx.ajax("GET", url, {
      target: target,
      swap: "outerHTML",
      headers: byItself ? BY_ITSELF : {},
    });
  }

  function poll(bar) {
    if (bar.getAttribute("data-live-busy")) {
      return;
    }
    if (bar.getAttribute("data-live-mode") === "swap") {
      reload(bar, true);
      return;
    }
    bar.setAttribute("data-live-busy", "true");
    fetch(bar.getAttribute("data-live-poll"), {
      headers: Object.assign(
        { Accept: "application/json", "HX-Current-URL": window.location.href },
        BY_ITSELF
      ),
      credentials: "same-origin",
    })
      .then(function (response) {
        var signIn = response.headers.get("HX-Redirect");
        if (signIn) {
          // The session ended: the page goes to sign-in rather than keep showing the queue.
          window.location.assign(signIn);
          throw new Error("signed out");
        }
        if (!response.ok) {
          throw new Error("live poll answered " + response.status);
        }
        return response.json();
      })
      .then(function (figures) {
        showMarker(bar, figures);
        bar.removeAttribute("data-live-error");
      })
      .catch(function () {
        // A lost connection or a restart: say so on the bar, try again at the next tick.
        bar.setAttribute("data-live-error", "true");
      })
      .then(function () {
        bar.removeAttribute("data-live-busy");
      });
  }

  function tick() {
    if (document.hidden || paused()) {
      return;
    }
    var now = Date.now();
    document.querySelectorAll("[data-live]").forEach(function (bar) {
      var every = (parseInt(bar.getAttribute("data-live-seconds"), 10) || 10) * 1000;
      var last = parseInt(bar.getAttribute("data-live-at"), 10);
      if (!last) {
        bar.setAttribute("data-live-at", String(now));
        return;
      }
      if (now - last >= every) {
        bar.setAttribute("data-live-at", String(now));
        poll(bar);
      }
    });
  }

  function renderAll() {
    document.querySelectorAll("[data-live]").forEach(render);
  }

  document.addEventListener("click", function (event) {
    var toggle = event.target.closest("[data-live-toggle]");
    if (toggle) {
      remember(!paused());
      renderAll();
      return;
    }
    var show = event.target.closest("[data-live-show]");
    if (show) {
      reload(show.closest("[data-live]"), false);
    }
  });
  // Another tab paused or resumed: follow it.
  window.addEventListener("storage", function (event) {
    if (event.key === PAUSED_KEY) {
      renderAll();
    }
  });
  // A re-read that failed leaves its bar in place: let the next tick try again.
  document.addEventListener("htmx:afterRequest", function () {
    document.querySelectorAll("[data-live][data-live-busy]").forEach(function (bar) {
      if (bar.getAttribute("data-live-mode") === "swap" || bar.querySelector("[data-live-show]")) {
        bar.removeAttribute("data-live-busy");
      }
    });
  });
  document.addEventListener("DOMContentLoaded", renderAll);
  document.addEventListener("htmx:afterSettle", renderAll);
  window.setInterval(tick, TICK_MS);
})();
