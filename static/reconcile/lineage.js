// Lineage graphs: draw each figure from its JSON block with the locally served plotly.js,
// and open a node's console page when it is clicked. The figure is data, not script, so the
// page needs no inline JavaScript (the CSP allows scripts from this origin only).
(function () {
  "use strict";

  var CONFIG = {
    displaylogo: false,
    responsive: true,
    modeBarButtonsToRemove: ["select2d", "lasso2d", "autoScale2d", "toImage"],
  };

  function openNode(event) {
    var point = event && event.points && event.points[0];
    var url = point && point.customdata && point.customdata[0];
    // Only this console's own pages: every target is a path built by the server.
    if (typeof url === "string" && url.charAt(0) === "/" && url.charAt(1) !== "/") {
      window.location.assign(url);
    }
  }

  function draw(container) {
    if (container.getAttribute("data-drawn") || typeof window.Plotly === "undefined") {
      return;
    }
    var source = document.getElementById(container.getAttribute("data-figure"));
    if (!source) {
      return;
    }
    var figure = JSON.parse(source.textContent);
    // The dark theme swaps the figure's neutral colours (console.js).
    if (window.reconcileThemedFigure) {
      figure = window.reconcileThemedFigure(figure);
    }
    container.setAttribute("data-drawn", "true");
    window.Plotly.newPlot(container, figure.data, figure.layout, CONFIG).then(function (plot) {
      plot.on("plotly_click", openNode);
      // A node is a link: say so with the cursor (Plotly's drag layer sets its own).
      var drag = plot.querySelector(".nsewdrag");
      plot.on("plotly_hover", function () { if (drag) { drag.style.cursor = "pointer"; } });
      plot.on("plotly_unhover", function () { if (drag) { drag.style.cursor = ""; } });
      container.setAttribute("data-ready", "true");
    });
  }

  function drawAll(root) {
    (root || document).querySelectorAll("[data-lineage-graph]").forEach(draw);
  }

  document.addEventListener("DOMContentLoaded", function () { drawAll(document); });
  // The depth control swaps the graph region in: draw the new figure, free the old one.
  document.addEventListener("htmx:beforeSwap", function (event) {
    var target = event.detail.target;
    // An error answer swaps nothing: the graph stays drawn.
    if (target && window.Plotly && event.detail.shouldSwap) {
      target.querySelectorAll(".js-plotly-plot").forEach(function (plot) { window.Plotly.purge(plot); });
    }
  });
  document.addEventListener("htmx:afterSettle", function () { drawAll(document); });
})();
