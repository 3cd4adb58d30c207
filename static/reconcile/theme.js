// Runs before the first paint (loaded without `defer`): a theme chosen with the toggle wins
// over the system's; without a choice, console.css follows prefers-color-scheme.
(function () {
  "use strict";
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
