"""The console's home: the live operational figures, each card linking to where it is acted on.

The figures are `operational_metrics()`, the same numbers `GET /api/v1/metrics` and
`/metrics` serve, so the page, the API and the monitoring always agree; their query count is
fixed whatever the volume, and they are cached per window for one refresh period (every open
tab re-reads the page that often). Every bar and point leads to the list it counts (its URL rides in
the figure's customdata), the window is 1 h, 24 h or 7 d, and the cards re-read themselves
every few seconds unless the reader paused live updates (static/reconcile/live.js).
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from django.urls import reverse
from django.views.generic import TemplateView

from reconcile_app.canonical import rfc3339
from reconcile_app.chart_data import rows_of
from reconcile_app.charts import (
    counts_figure,
    figure_json,
    latency_figure,
    refusals_figure,
    resolution_figure,
    unknown_ages_figure,
    verdict_mix_figure,
)
from reconcile_app.choices import DecisionResult, QuarantineStatus
from reconcile_app.console.live import LIVE_SECONDS
from reconcile_app.console.mixins import HtmxPartialMixin, StaffRequiredMixin
from reconcile_app.selectors.metrics import operational_metrics_cached

# The statuses the quarantines card counts (selectors/metrics.py `_quarantines`).
ACTIVE_QUARANTINE = (QuarantineStatus.APPLYING, QuarantineStatus.APPLIED)
# The window picker's choices, in hours, and how they read.
WINDOWS = {1: "1 h", 24: "24 h", 168: "7 d"}
WINDOW_HOURS = 24
# The results that did not allow, in the refusals card's order.
NOT_ALLOWED_ORDER = (DecisionResult.DENY, DecisionResult.REFUSE, DecisionResult.ESCALATE)


def _url(name: str, /, *args: str, **query: str | list[str]) -> str:
    base = reverse(name, args=args)
    return f"{base}?{urlencode(query, doseq=True)}" if query else base


def _moment(text: str) -> datetime:
    """An RFC 3339 time from the figures (Python 3.11 reads a trailing Z as UTC)."""
    return datetime.fromisoformat(text)


def _hour_range(hour: str) -> dict[str, str]:
    start = _moment(hour)
    return {
        "issued_after": rfc3339(start) or "",
        "issued_before": rfc3339(start + timedelta(hours=1)) or "",
    }


class OverviewView(StaffRequiredMixin, HtmxPartialMixin, TemplateView):
    template_name = "reconcile_app/overview.html"
    partial_template_name = "reconcile_app/partials/overview_region.html"

    def window(self) -> tuple[int, str]:
        """The window asked for, and a message when the asked one is not offered."""
        raw = self.request.GET.get("hours", "")
        if not raw:
            return WINDOW_HOURS, ""
        try:
            hours = int(raw)
        except ValueError:
            hours = 0
        if hours in WINDOWS:
            return hours, ""
        offered = ", ".join(WINDOWS.values())
        return WINDOW_HOURS, f"“{raw}” is not a window this page offers ({offered}): showing 24 h."

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        hours, window_error = self.window()
        # One computation per window per refresh period, whatever the number of open tabs.
        metrics = operational_metrics_cached(hours=hours, seconds=LIVE_SECONDS)
        hourly = metrics["hourly"]
        generated = _moment(metrics["generated_at"])
        since = {"issued_after": rfc3339(generated - timedelta(hours=hours)) or ""}
        context["metrics"] = metrics
        context["window_error"] = window_error
        context["windows"] = [
            {"hours": value, "label": label, "current": value == hours}
            for value, label in WINDOWS.items()
        ]
        reload_url = _url("console-home", hours=str(hours))
        context["live"] = {
            "seconds": LIVE_SECONDS,
            "poll_url": reload_url,
            "reload_url": reload_url,
            "region": "#overview-region",
        }
        context["since_query"] = urlencode(since)
        context["decisions"] = sum(row["reconciles"] for row in hourly)
        not_allowed: Counter[str] = sum((Counter(row["decisions"]) for row in hourly), Counter())
        del not_allowed[DecisionResult.ALLOW]
        context["refused_decisions"] = sum(not_allowed.values())
        # The headline's parts, each opening the snapshots it counts (the card's own link
        # opens the denied ones alone).
        context["not_allowed"] = [
            {
                "result": result,
                "count": not_allowed[result],
                "url": _url("console-snapshots", result=result, **since),
            }
            for result in NOT_ALLOWED_ORDER
            if not_allowed.get(result)
        ]
        context["claims_judged"] = sum(sum(row["verdicts"].values()) for row in hourly)
        # The outcomes the resolution figure summarises: unknown, and settled in the window.
        resolution_url = _url("console-effects", status="all", settled_after=since["issued_after"])
        drawn = {
            "unknown": unknown_ages_figure(
                metrics["unknown_outcomes"],
                link=lambda key: reverse("console-effect", args=[key]),
            ),
            "resolution": resolution_figure(
                metrics["resolution_seconds"], link=lambda: resolution_url
            ),
            "refusals": (
                refusals_figure(
                    metrics["refusals"],
                    link=lambda result, code: _url(
                        "console-snapshots", result=result, reason_code=code, **since
                    ),
                )
            ),
            "verdicts": (
                verdict_mix_figure(
                    hourly,
                    link=lambda hour, verdict: _url(
                        "console-snapshots", verdict=verdict, **_hour_range(hour)
                    ),
                )
            ),
            "latency": (
                latency_figure(
                    hourly, link=lambda hour: _url("console-snapshots", **_hour_range(hour))
                )
            ),
            "escalations": (
                counts_figure(
                    metrics["escalations"]["by_code"],
                    colour="amber",
                    empty="No escalation is waiting",
                    link=lambda code: _url("console-escalations", status="open", code=code),
                )
            ),
            "contradictions": (
                counts_figure(
                    metrics["contradictions"]["by_kind"],
                    colour="red",
                    empty="No contradiction is open",
                    link=lambda kind: _url("console-contradictions", status="open", kind=kind),
                )
            ),
            "quarantines": (
                counts_figure(
                    metrics["quarantines"]["by_scope"],
                    colour="purple",
                    empty="Nothing is quarantined",
                    # In force only: the history also lists lifted and failed ones.
                    link=lambda scope: _url(
                        "console-quarantine", scope=scope, status=list(ACTIVE_QUARANTINE)
                    ),
                )
            ),
        }
        context["resolution_url"] = resolution_url
        context["figures"] = {name: figure_json(figure) for name, figure in drawn.items()}
        # The same bars and points as links, under each chart, for keyboards and readers.
        context["chart_rows"] = rows_of(drawn)
        return context
