"""The drills page's list of past runs: each run's headline, and a box to pick it to compare.

Cells render from the row alone (its headline figures are taken out of the stored JSON by
the page's one query, `console_drill_runs`): no per-row query.
"""

from __future__ import annotations

from typing import Any

import django_tables2 as tables
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from drills_app.choices import DrillRunKind, DrillRunStatus
from drills_app.models import DrillRun
from drills_app.selectors import DRILL_METRICS
from reconcile_app.console.tables.common import PagedTable
from reconcile_app.templatetags.chart_tags import pct
from reconcile_app.templatetags.reconcile_tags import EMPTY, badge, duration, ts

TABLE_TEMPLATE = "reconcile_app/tables/console_table.html"
COMPARE_FORM = "compare-form"
KIND_TAGS: dict[str, str] = {
    DrillRunKind.DRIFT_BENCHMARK: "drift benchmark",
    DrillRunKind.DRILL: "drill",
}


def run_verdict(run: Any, checks: dict[str, bool] | None = None) -> SafeString:
    """A drill passes or fails; a benchmark measures, and only its own checks can fail.

    `checks` defaults to the row's annotation (the runs list); a full run passes its own.
    """
    if run.status != DrillRunStatus.COMPLETE:
        return EMPTY
    if run.kind == DrillRunKind.DRILL:
        return badge("complete" if run.passed else "failed", "passed" if run.passed else "failed")
    checks = checks if checks is not None else getattr(run, "checks", None) or {}
    ok = bool(checks) and all(checks.values())
    return badge("complete" if ok else "failed", "checks pass" if ok else "checks fail")


def _failures(totals: dict[str, Any], arm: str) -> int:
    figures = totals.get(arm) or {}
    return sum(int(figures.get(name) or 0) for name, _ in DRILL_METRICS)


def run_headline(run: Any) -> SafeString:
    if run.status == DrillRunStatus.RUNNING:
        progress = run.progress or {}
        if progress.get("total"):
            return format_html(
                '<span class="polling">{} of {} · {}</span>',
                progress.get("done", 0),
                progress["total"],
                str(progress.get("stage", "")).replace("_", " "),
            )
        return format_html('<span class="polling">{}</span>', "waiting for a worker")
    if run.status == DrillRunStatus.FAILED:
        return format_html('<span class="field-error">{}</span>', (run.error or "")[:120])
    if run.kind == DrillRunKind.DRIFT_BENCHMARK:
        horizons = run.horizons or []
        if not horizons:
            return EMPTY
        first, last = horizons[0], horizons[-1]
        return format_html(
            "stale <strong>{}</strong> @{} → <strong>{}</strong> @{}"
            ' <span class="muted">· reconstruction exact {}</span>',
            pct(first["stale_checkpoint_rate"]),
            first["horizon"],
            pct(last["stale_checkpoint_rate"]),
            last["horizon"],
            pct(min(row["reconstruction_exact_rate"] for row in horizons), 0),
        )
    totals = run.totals or {}
    return format_html(
        "protocol let <strong>{}</strong> through · baseline <strong>{}</strong>",
        _failures(totals, "protocol"),
        _failures(totals, "baseline"),
    )


def run_parameters(run: Any) -> str:
    p = run.parameters or {}
    if run.kind == DrillRunKind.DRIFT_BENCHMARK:
        return (
            f"{p.get('episodes', '?')} episodes · horizons {p.get('min_horizon', '?')} to "
            f"{p.get('max_horizon', '?')} · mutation {float(p.get('mutation_rate', 0)):.0%}"
            f" · omission {float(p.get('omission_rate', 0)):.0%}"
        )
    repeat = p.get("repeat", "?")
    count = len(p.get("scenarios") or []) or "all"
    return f"{repeat} trial{'' if repeat == 1 else 's'} per scenario · {count} scenarios"


class DrillRunTable(PagedTable):
    pick = tables.Column(empty_values=(), verbose_name="Compare", orderable=False)
    id = tables.Column(verbose_name="Run")
    kind = tables.Column()
    status = tables.Column()
    verdict = tables.Column(empty_values=(), verbose_name="Verdict", orderable=False)
    headline = tables.Column(empty_values=(), verbose_name="Result", orderable=False)
    parameters = tables.Column(empty_values=(), verbose_name="Parameters", orderable=False)
    started_at = tables.Column(verbose_name="Started (UTC)")
    took = tables.Column(empty_values=(), verbose_name="Took", orderable=False)
    started_by = tables.Column(
        accessor="started_by__username",
        verbose_name="By",
        order_by=("started_by__username",),
        empty_values=(),
    )

    class Meta:
        template_name = TABLE_TEMPLATE
        attrs = {"class": "data-table", "id": "drill-runs"}
        row_attrs = {
            "id": lambda record: f"drill-run-{record.pk}",
            "data-kind": lambda record: record.kind,
            "data-status": lambda record: record.status,
        }
        empty_text = "No run yet: operators start drills and benchmarks on this page."

    def render_pick(self, record: DrillRun) -> SafeString:
        return format_html(
            '<input type="checkbox" name="run" value="{}" form="{}" data-kind="{}"'
            ' aria-label="Compare run #{}"{}>',
            record.pk,
            COMPARE_FORM,
            record.kind,
            record.pk,
            "" if record.status == DrillRunStatus.COMPLETE else " disabled",
        )

    def render_id(self, record: DrillRun) -> SafeString:
        url = reverse("console-drill", args=[record.pk])
        return format_html('<a class="mono" href="{}">#{}</a>', url, record.pk)

    def render_kind(self, record: DrillRun) -> SafeString:
        return format_html('<span class="tag">{}</span>', KIND_TAGS.get(record.kind, record.kind))

    def render_status(self, record: DrillRun) -> SafeString:
        return badge(record.status)

    def render_verdict(self, record: DrillRun) -> SafeString:
        return run_verdict(record)

    def render_headline(self, record: DrillRun) -> SafeString:
        return run_headline(record)

    def render_parameters(self, record: DrillRun) -> SafeString:
        return format_html('<span class="muted">{}</span>', run_parameters(record))

    def render_started_at(self, record: DrillRun) -> SafeString:
        return ts(record.started_at)

    def render_took(self, record: DrillRun) -> SafeString:
        if record.finished_at is None:
            return EMPTY
        return format_html(
            '<span class="nowrap">{}</span>',
            duration((record.finished_at - record.started_at).total_seconds()),
        )

    def render_started_by(self, value: str | None) -> SafeString:
        return format_html('<span class="nowrap">{}</span>', value or "command line")
