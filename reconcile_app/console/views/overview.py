"""The console's home: the live operational figures, each card linking to where it is acted on.

The figures are `operational_metrics()`, the same numbers `GET /api/v1/metrics` and
`/metrics` serve, so the page, the API and the monitoring always agree; their query count is
fixed whatever the volume.
"""

from __future__ import annotations

from typing import Any

from django.views.generic import TemplateView

from reconcile_app.charts import (
    counts_figure,
    figure_json,
    latency_figure,
    refusals_figure,
    resolution_figure,
    unknown_ages_figure,
    verdict_mix_figure,
)
from reconcile_app.console.mixins import StaffRequiredMixin
from reconcile_app.selectors.metrics import operational_metrics

WINDOW_HOURS = 24


class OverviewView(StaffRequiredMixin, TemplateView):
    template_name = "reconcile_app/overview.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        metrics = operational_metrics(hours=WINDOW_HOURS)
        hourly = metrics["hourly"]
        context["metrics"] = metrics
        context["decisions"] = sum(row["reconciles"] for row in hourly)
        context["refused_decisions"] = sum(
            count
            for row in hourly
            for result, count in row["decisions"].items()
            if result != "allow"
        )
        context["claims_judged"] = sum(sum(row["verdicts"].values()) for row in hourly)
        context["figures"] = {
            "unknown": figure_json(unknown_ages_figure(metrics["unknown_outcomes"])),
            "resolution": figure_json(resolution_figure(metrics["resolution_seconds"])),
            "refusals": figure_json(refusals_figure(metrics["refusals"])),
            "verdicts": figure_json(verdict_mix_figure(hourly)),
            "latency": figure_json(latency_figure(hourly)),
            "escalations": figure_json(
                counts_figure(
                    metrics["escalations"]["by_code"],
                    colour="amber",
                    empty="No escalation is waiting",
                )
            ),
            "contradictions": figure_json(
                counts_figure(
                    metrics["contradictions"]["by_kind"],
                    colour="red",
                    empty="No contradiction is open",
                )
            ),
            "quarantines": figure_json(
                counts_figure(
                    metrics["quarantines"]["by_scope"],
                    colour="purple",
                    empty="Nothing is quarantined",
                )
            ),
        }
        return context
