// Runs before the first paint (loaded without `defer`): a theme chosen with the toggle wins
// over the system's; without a choice, console.css follows prefers-color-scheme.
(function () {
  "use strict";
  // Scripts run: show the controls only they make work (console.css hides .needs-js until
  // then), before the first paint so the top bar does not shift.
  document.documentElement.classList.add("js");
  var chosen = null;
  try {
    chosen = window.localStorage.getItem("reconcile.theme");
  } catch (error) {
    chosen = null; // storage refused (private mode): follow the system
  }
  if (chosen === "dark" || chosen === "light") {
    document.documentElement.setAttribute("data-theme", chosen);
  }
})();
