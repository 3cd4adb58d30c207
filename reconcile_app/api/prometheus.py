"""The operational figures in the Prometheus text exposition format (version 0.0.4).

Counters are what only grows (decisions, verdicts: both insert-only); everything else is a
gauge. Figures over a window (resolution time, refusals, latency) say so in their HELP text;
a quantile with no sample is NaN, as Prometheus expects.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from django.utils.dateparse import parse_datetime

from reconcile_app.choices import DecisionResult, EffectStatus, QuarantineScope, Verdict

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
Sample = tuple[dict[str, str], float | int | None]


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float | int | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "NaN"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    return repr(float(value))


class Exposition:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def metric(self, name: str, kind: str, help_text: str, samples: Iterable[Sample]) -> None:
        self.lines.append(f"# HELP {name} {help_text}")
        self.lines.append(f"# TYPE {name} {kind}")
        for labels, value in samples:
            label_text = ",".join(f'{key}="{_escape(str(val))}"' for key, val in labels.items())
            self.lines.append(
                f"{name}{{{label_text}}} {_number(value)}"
                if label_text
                else f"{name} {_number(value)}"
            )

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _by(label: str, counts: dict[str, int], known: Iterable[str] = ()) -> list[Sample]:
    values = {**dict.fromkeys(known, 0), **counts}
    return [({label: key}, values[key]) for key in sorted(values)]


def _quantiles(figures: dict[str, Any] | None, scale: float) -> list[Sample]:
    figures = figures or {}
    return [
        ({"quantile": quantile}, None if figures.get(key) is None else figures[key] * scale)
        for quantile, key in (("0.5", "p50"), ("0.95", "p95"))
    ]


def prometheus_exposition(figures: dict[str, Any]) -> str:
    out = Exposition()
    window = f"over the last {figures['window_hours']}h"
    totals = figures["totals"]
    out.metric(
        "reconcile_decisions_total",
        "counter",
        "Reconcile decisions issued (snapshots), by result.",
        _by("result", totals["decisions"], DecisionResult.values),
    )
    out.metric(
        "reconcile_claim_verdicts_total",
        "counter",
        "Remembered claims classified by reconciliation, by verdict.",
        _by("verdict", totals["verdicts"], Verdict.values),
    )
    out.metric(
        "reconcile_effects",
        "gauge",
        "Effects by current status.",
        _by("status", totals["effects"], EffectStatus.values),
    )
    unknown = figures["unknown_outcomes"]
    out.metric(
        "reconcile_unknown_outcomes_open",
        "gauge",
        "Effects whose outcome is unknown now (awaiting resolution or triage).",
        [({}, unknown["open"])],
    )
    out.metric(
        "reconcile_unknown_outcome_oldest_age_seconds",
        "gauge",
        "Age of the oldest open unknown outcome (0 when there is none).",
        [({}, unknown["oldest_age_seconds"] or 0)],
    )
    resolution = figures["resolution_seconds"]
    out.metric(
        "reconcile_unknown_outcome_resolution_seconds",
        "gauge",
        f"Time from timeout to settlement of unknown outcomes settled {window}.",
        _quantiles(resolution, 1.0),
    )
    out.metric(
        "reconcile_unknown_outcomes_resolved",
        "gauge",
        f"Unknown outcomes settled {window}.",
        [({}, resolution["resolved"])],
    )
    out.metric(
        "reconcile_refusals",
        "gauge",
        f"Reason codes of decisions that did not allow, {window}, by result and code.",
        [
            ({"result": row["result"], "code": row["code"]}, row["count"])
            for row in figures["refusals"]
        ],
    )
    reconcile = figures["reconcile"]
    out.metric(
        "reconcile_reconciles",
        "gauge",
        f"Reconcile decisions issued {window}.",
        [({}, reconcile["count"])],
    )
    out.metric(
        "reconcile_latency_seconds",
        "gauge",
        f"Reconcile latency {window}, from the first owner read's answer to the decision.",
        _quantiles(reconcile["latency_ms"], 0.001),
    )
    for name, key, label in (
        ("escalations", "escalations", "code"),
        ("contradictions", "contradictions", "kind"),
    ):
        group = figures[key]
        out.metric(f"reconcile_{name}_open", "gauge", f"Open {name}.", [({}, group["open"])])
        out.metric(
            f"reconcile_{name}_open_by_{label}",
            "gauge",
            f"Open {name}, by {label}.",
            _by(label, group[f"by_{label}"]),
        )
        out.metric(
            f"reconcile_{name}_oldest_open_age_seconds",
            "gauge",
            f"Age of the oldest open one of the {name} (0 when there is none).",
            [({}, group["oldest_age_seconds"] or 0)],
        )
    out.metric(
        "reconcile_quarantines_active",
        "gauge",
        "Quarantines in force (applying or applied), by scope.",
        _by("scope", figures["quarantines"]["by_scope"], QuarantineScope.values),
    )
    drill = figures.get("last_drill")
    if drill is not None:
        out.metric(
            "reconcile_drill_last_passed",
            "gauge",
            "1 when the last complete drill passed (the protocol let nothing escape), else 0.",
            [({}, bool(drill["passed"]))],
        )
        finished = parse_datetime(drill["finished_at"]) if drill["finished_at"] else None
        out.metric(
            "reconcile_drill_last_finished_timestamp_seconds",
            "gauge",
            "When the last complete drill finished (Unix time).",
            [({}, finished.timestamp() if finished else None)],
        )
        out.metric(
            "reconcile_drill_last_protocol_failures",
            "gauge",
            "Failures of the protocol in the last complete drill, by kind.",
            [({"failure": name}, value) for name, value in sorted(drill["protocol"].items())],
        )
    return out.text()
