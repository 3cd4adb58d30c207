"""Reads for the drills page: the runs list, one run in full, two runs side by side.

A drill's results hold every trial's steps (tens of kilobytes a run), so the list never loads
`results`: it takes only the headline parts (per-horizon figures, totals, checks) out of the
JSON in the database, one query a page whatever the runs hold. The row helpers turn stored
results into the numbers printed beside the charts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet
from django.db.models.fields.json import KeyTransform

from drills_app.choices import DrillRunKind, DrillRunStatus
from drills_app.models import DrillRun
from reconcile_app.canonical import rfc3339
from reconcile_app.errors import NotFound, ValidationFailed

# The drill's failures charted and tabled, in the order the page reads them.
DRILL_METRICS: tuple[tuple[str, str], ...] = (
    ("stale_memory_escapes", "Stale-memory escape"),
    ("unsupported_authorisations", "Unsupported authorisation"),
    ("duplicate_effects", "Duplicate effects"),
    ("silent_failures", "Silent failures"),
    ("false_refusals", "False refusals"),
)
KIND_LABELS: dict[str, str] = {
    DrillRunKind.DRIFT_BENCHMARK: "Drift benchmark",
    DrillRunKind.DRILL: "Failure-injection drill",
}
# The parameters a comparison lists, in order, with how to print each.
DRIFT_PARAMETERS = (
    ("episodes", "Episodes per horizon", "int"),
    ("min_horizon", "Shortest horizon", "int"),
    ("max_horizon", "Longest horizon", "int"),
    ("interval", "Steps per compaction", "int"),
    ("mutation_rate", "Mutation", "pct"),
    ("omission_rate", "Omission", "pct"),
    ("seed", "Seed", "int"),
)
DRILL_PARAMETERS = (
    ("repeat", "Trials per scenario and arm", "int"),
    ("scenarios", "Scenarios", "count"),
)


def console_drill_runs() -> QuerySet[DrillRun]:
    """Newest first, each with its headline figures but not its per-trial detail."""
    return (
        DrillRun.objects.select_related("started_by")
        .defer("results")
        .annotate(
            horizons=KeyTransform("horizons", "results"),
            totals=KeyTransform("totals", "results"),
            checks=KeyTransform("checks", "results"),
        )
    )


def console_drill_run(*, run_id: int) -> DrillRun:
    """One run in full, results and all."""
    run = DrillRun.objects.select_related("started_by").filter(pk=run_id).first()
    if run is None:
        raise NotFound(f"no drill run {run_id}", code="drill_run_not_found")
    return run


def console_drill_latest(*, kind: str) -> DrillRun | None:
    return DrillRun.objects.select_related("started_by").filter(kind=kind).first()


def console_drill_pair(*, run_ids: Sequence[int]) -> list[DrillRun]:
    """Two runs of one kind, the earlier first (one query)."""
    wanted = list(dict.fromkeys(run_ids))
    if len(wanted) != 2:
        raise ValidationFailed("pick two different runs to compare", code="pick_two_runs")
    runs = {
        run.pk: run for run in DrillRun.objects.select_related("started_by").filter(pk__in=wanted)
    }
    missing = [str(run_id) for run_id in wanted if run_id not in runs]
    if missing:
        raise NotFound(f"no drill run {', '.join(missing)}", code="drill_run_not_found")
    if runs[wanted[0]].kind != runs[wanted[1]].kind:
        raise ValidationFailed(
            "only runs of the same kind compare: pick two drills or two drift benchmarks",
            code="different_kinds",
        )
    return [runs[run_id] for run_id in sorted(wanted)]


# --- Numbers beside the charts --------------------------------------------------------------


@dataclass(frozen=True)
class MetricRow:
    name: str
    label: str
    protocol: Mapping[str, Any]
    baseline: Mapping[str, Any]


def _metric_cell(figures: Mapping[str, Any], name: str) -> dict[str, Any]:
    return {
        "count": figures.get(name, 0),
        "exposed": figures.get(f"{name}_exposed", 0),
        "rate": figures.get(f"{name}_rate"),
    }


def drill_metric_rows(totals: Mapping[str, Any]) -> list[MetricRow]:
    """The charted failures, each as count, exposed trials and rate for both arms."""
    protocol, baseline = totals.get("protocol") or {}, totals.get("baseline") or {}
    return [
        MetricRow(name, label, _metric_cell(protocol, name), _metric_cell(baseline, name))
        for name, label in DRILL_METRICS
    ]


def drill_scenario_rows(results: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per scenario: what each arm did most often and what it let through."""
    rows = []
    for scenario in results.get("scenarios") or []:
        row: dict[str, Any] = {
            "name": scenario["name"],
            "title": scenario["title"],
            "hazards": scenario.get("hazards") or [],
            "baseline_failed_as_expected": scenario.get("baseline_failed_as_expected"),
        }
        for arm in ("protocol", "baseline"):
            figures = scenario.get(arm) or {}
            row[arm] = {
                "trials": figures.get("trials", 0),
                "outcome": figures.get("outcome", ""),
                "failures": [
                    (label, figures.get(name, 0))
                    for name, label in DRILL_METRICS
                    if figures.get(name)
                ],
            }
        rows.append(row)
    return rows


def _format(value: Any, style: str) -> str:
    if value is None:
        return "—"
    if style == "pct":
        return f"{float(value):.0%}"
    if style == "count":
        return str(len(value)) if isinstance(value, list | tuple) else str(value)
    return str(value)


def compare_parameter_rows(runs: Sequence[DrillRun]) -> list[dict[str, Any]]:
    """The parameters of both runs, side by side; `differs` marks what is not like for like."""
    kind = runs[0].kind
    spec = DRIFT_PARAMETERS if kind == DrillRunKind.DRIFT_BENCHMARK else DRILL_PARAMETERS
    rows = []
    for key, label, style in spec:
        values = [(run.parameters or {}).get(key) for run in runs]
        rows.append(
            {
                "label": label,
                "values": [_format(value, style) for value in values],
                "differs": values[0] != values[1],
            }
        )
    return rows


def compare_drift_rows(runs: Sequence[DrillRun]) -> list[dict[str, Any]]:
    """Per horizon both runs' stale rate and final accuracy (None where a run stops)."""
    by_run = [
        {row["horizon"]: row for row in (run.results or {}).get("horizons") or []} for run in runs
    ]
    horizons = sorted({horizon for rows in by_run for horizon in rows})
    return [
        {
            "horizon": horizon,
            "runs": [rows.get(horizon) for rows in by_run],
        }
        for horizon in horizons
    ]


def compare_drill_rows(runs: Sequence[DrillRun]) -> list[dict[str, Any]]:
    """Per charted failure: both arms of both runs."""
    totals = [(run.results or {}).get("totals") or {} for run in runs]
    return [
        {
            "label": label,
            "cells": [
                _metric_cell(run_totals.get(arm) or {}, name)
                for run_totals in totals
                for arm in ("protocol", "baseline")
            ],
        }
        for name, label in DRILL_METRICS
    ]


def drill_last_summary() -> dict[str, Any] | None:
    """The last complete drill's verdict and protocol failures, for operational metrics (one
    query; registered with reconcile_app.selectors.metrics by DrillsAppConfig.ready)."""
    run = (
        DrillRun.objects.filter(kind=DrillRunKind.DRILL, status=DrillRunStatus.COMPLETE)
        .order_by("-finished_at", "-id")
        .values("id", "passed", "finished_at", "results__totals__protocol")
        .first()
    )
    if run is None:
        return None
    protocol = run["results__totals__protocol"] or {}
    return {
        "id": run["id"],
        "passed": run["passed"],
        "finished_at": rfc3339(run["finished_at"]),
        "protocol": {
            name: protocol.get(name)
            for name in (
                "stale_memory_escapes",
                "unsupported_authorisations",
                "duplicate_effects",
                "silent_failures",
                "false_refusals",
                "replay_failures",
            )
        },
    }
