// Console charts: draw every figure from its JSON block with the locally served plotly.js.
// A figure is data (<script type="application/json">, never executed), so pages need no
// inline script and the CSP allows scripts from this origin only. Any element with
// `data-chart="<id of its JSON block>"` is drawn on load and after every htmx swap; a region
// about to be swapped out frees its plots first. In the dark theme the figure's neutral
// colours are swapped (console.js), and a theme change redraws every chart.
(function () {
  "use strict";

  var CONFIG = { displaylogo: false, responsive: true, displayModeBar: false };

  function draw(container) {
    if (container.getAttribute("data-drawn") || typeof window.Plotly === "undefined") {
      return;
    }
    var source = document.getElementById(container.getAttribute("data-chart"));
    if (!source) {
      return;
    }
    var figure = themed(JSON.parse(source.textContent));
    container.setAttribute("data-drawn", "true");
    window.Plotly.newPlot(container, figure.data, figure.layout, CONFIG).then(function () {
      if (hasLinks(figure)) {
        container.setAttribute("data-chart-links", "true");
        container.on("plotly_click", follow);
      }
      container.setAttribute("data-ready", "true");
    });
  }

  function themed(figure) {
    return window.reconcileThemedFigure ? window.reconcileThemedFigure(figure) : figure;
  }

  // The theme toggled: redraw every drawn chart in the new colours.
  function redrawAll() {
    document.querySelectorAll("[data-chart][data-ready]").forEach(function (container) {
      var source = document.getElementById(container.getAttribute("data-chart"));
      if (source && window.Plotly) {
        var figure = themed(JSON.parse(source.textContent));
        window.Plotly.react(container, figure.data, figure.layout, CONFIG);
      }
    });
  }

  // A bar or point leads to the list it counts: its URL is the last item of its customdata
  // (reconcile_app/charts.py). Only same-origin paths are followed.
  function linkOf(point) {
    var data = point && point.customdata;
    var url = Array.isArray(data) ? data[data.length - 1] : data;
    return typeof url === "string" && url.charAt(0) === "/" && url.charAt(1) !== "/" ? url : "";
  }

  function hasLinks(figure) {
    return (figure.data || []).some(function (trace) {
      return (trace.customdata || []).some(function (data) {
        return linkOf({ customdata: data }) !== "";
      });
    });
  }

  function follow(event) {
    var url = linkOf(event && event.points && event.points[0]);
    if (url) {
      window.location.assign(url);
    }
  }

  function drawAll() {
    document.querySelectorAll("[data-chart]").forEach(draw);
  }

  document.addEventListener("DOMContentLoaded", drawAll);
  document.addEventListener("htmx:beforeSwap", function (event) {
    var target = event.detail.target;
    // An error answer (a 503 in an outage) swaps nothing: the page keeps its charts.
    if (target && window.Plotly && event.detail.shouldSwap) {
      target.querySelectorAll("[data-chart].js-plotly-plot").forEach(function (plot) {
        window.Plotly.purge(plot);
      });
    }
  });
  document.addEventListener("htmx:afterSettle", drawAll);
  document.addEventListener("reconcile:theme", redrawAll);
})();
