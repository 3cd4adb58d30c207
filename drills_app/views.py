"""The drills page: start the drift benchmark or the failure-injection drill, watch it run,
read its results as charts with the numbers beside them, and compare two runs.

Starting only enqueues (`drill_run_enqueue`: a Celery worker runs it after the commit); the
run's panel then asks the server every POLL_SECONDS, through a small partial, until the run
has finished, and the finished panel carries its charts. Only operators start runs: every
person in a role reads the results, and the server refuses anyone else's POST with 403.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.views import View
from django.views.generic import TemplateView
from django_filters.views import FilterView
from django_tables2 import SingleTableMixin

from drills_app.charts import (
    drift_accuracy_figure,
    drift_compare_figure,
    drift_stale_figure,
    drill_compare_figure,
    drill_metrics_figure,
)
from drills_app.choices import DrillRunKind, DrillRunStatus
from drills_app.filtersets import DrillRunFilterSet
from drills_app.forms import START_FORMS, DriftBenchmarkForm, DrillForm
from drills_app.models import DrillRun
from drills_app.runs import drill_run_enqueue
from drills_app.selectors import (
    KIND_LABELS,
    compare_drift_rows,
    compare_drill_rows,
    compare_parameter_rows,
    console_drill_latest,
    console_drill_pair,
    console_drill_run,
    console_drill_runs,
    drill_metric_rows,
    drill_scenario_rows,
)
from drills_app.tables import (
    COMPARE_FORM,
    DrillRunTable,
    run_parameters,
    run_verdict,
)
from reconcile_app.charts import figure_json
from reconcile_app.choices import Role
from reconcile_app.console.forms.common import dress_filter_form
from reconcile_app.console.messages import console_message, hx_trigger
from reconcile_app.console.mixins import (
    PER_PAGE,
    HtmxPartialMixin,
    StaffRequiredMixin,
    not_found_is_404,
    polls,
)
from reconcile_app.console.node_links import node_blast_radius_url
from reconcile_app.errors import DomainError
from reconcile_app.request_id import request_id_of
from reconcile_app.roles import has_role

RUN_TEMPLATE = "drills_app/partials/drill_run.html"
POLL_SECONDS = 2
# A drill holds the sandbox for at most 15 minutes (runs.EXCLUSIVE_WINDOW); a panel polling
# longer than that is watching a worker that is down, so it stops and says so.
MAX_POLLS = 450
# The runs list re-reads itself when a polled run has moved on (HX-Trigger from the server).
CHANGED_EVENT = "drill-run-changed"
CHECK_LABELS = {
    "stale_rate_monotonic": "Stale rate never falls as the horizon grows",
    "reconstruction_exact": "Reconstruction exact at every horizon",
    "reconstruction_invariant": "Paired histories: reconstruction invariant",
    "negative_control_perfect": "Negative control (no mutation) perfect",
}


def _can_operate(request: HttpRequest) -> bool:
    return has_role(request.user, Role.OPERATOR)


def run_panel(run: DrillRun, *, polls: int = 0) -> dict[str, Any]:
    """What the run partial shows: state and progress, or the charts and their numbers."""
    running = run.status == DrillRunStatus.RUNNING
    progress = run.progress or {}
    total = int(progress.get("total") or 0)
    panel: dict[str, Any] = {
        "run": run,
        "label": KIND_LABELS.get(run.kind, run.kind),
        "polling": running and polls < MAX_POLLS,
        "gave_up": running and polls >= MAX_POLLS,
        "next_poll": polls + 1,
        "poll_seconds": POLL_SECONDS,
        "done": int(progress.get("done") or 0),
        "total": total,
        "percent": round(100 * int(progress.get("done") or 0) / total) if total else 0,
        "stage": str(progress.get("stage") or "").replace("_", " "),
        "figures": {},
        "chart_ids": {name: f"run-{run.pk}-{name}" for name in ("stale", "accuracy", "metrics")},
        "parameters": run_parameters(run),
        "took": (run.finished_at - run.started_at).total_seconds() if run.finished_at else None,
    }
    if run.status != DrillRunStatus.COMPLETE:
        return panel
    results = run.results or {}
    panel["verdict"] = run_verdict(run, checks=results.get("checks") or {})
    if run.kind == DrillRunKind.DRIFT_BENCHMARK:
        panel["figures"] = {
            "stale": figure_json(drift_stale_figure(results)),
            "accuracy": figure_json(drift_accuracy_figure(results)),
        }
        panel["horizons"] = results.get("horizons") or []
        panel["checks"] = [
            (CHECK_LABELS.get(name, name.replace("_", " ")), ok)
            for name, ok in (results.get("checks") or {}).items()
        ]
        panel["paired"] = results.get("paired_history") or {}
        panel["control"] = results.get("negative_control") or {}
    else:
        panel["figures"] = {"metrics": figure_json(drill_metrics_figure(results))}
        panel["metric_rows"] = drill_metric_rows(results.get("totals") or {})
        panel["scenario_rows"] = drill_scenario_rows(results)
        panel["totals"] = results.get("totals") or {}
        panel["failures"] = results.get("failures") or []
        panel["baseline_failed_where_expected"] = results.get("baseline_failed_where_expected")
        panel["poisoned"] = poisoned_panel(results.get("poisoned_memory"))
    return panel


def poisoned_panel(section: dict[str, Any] | None) -> dict[str, Any] | None:
    """The poisoned-memory scenario's figures, with a link to one trial's blast radius."""
    if not section:
        return None
    trials = section.get("trials_detail") or []
    memory_id = trials[0].get("memory_id") if trials else None
    return {
        **{key: value for key, value in section.items() if key != "trials_detail"},
        "memory_id": memory_id,
        "blast_radius_url": node_blast_radius_url(f"memory:{memory_id}") if memory_id else "",
    }


def _run(run_id: int) -> DrillRun:
    with not_found_is_404():
        return console_drill_run(run_id=run_id)


class DrillsPageView(StaffRequiredMixin, HtmxPartialMixin, SingleTableMixin, FilterView):
    """GET: the start forms (operators), the latest run of each kind, every past run.
    POST: start a run (operators only)."""

    filterset_class = DrillRunFilterSet
    table_class = DrillRunTable
    table_pagination = {"per_page": PER_PAGE}
    template_name = "drills_app/drills.html"
    partial_template_name = "drills_app/partials/drill_runs_region.html"
    start_form: DriftBenchmarkForm | DrillForm | None = None

    def get_queryset(self) -> QuerySet:
        return console_drill_runs()

    def get_filterset(self, filterset_class: Any) -> Any:
        filterset = super().get_filterset(filterset_class)
        dress_filter_form(filterset.form)
        return filterset

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["compare_form_id"] = COMPARE_FORM
        if self.wants_partial():
            return context
        can_operate = _can_operate(self.request)
        context["can_operate"] = can_operate
        if can_operate:
            bound = self.start_form
            context["drift_form"] = (
                bound if isinstance(bound, DriftBenchmarkForm) else DriftBenchmarkForm()
            )
            context["drill_form"] = bound if isinstance(bound, DrillForm) else DrillForm()
        context["latest"] = [
            run_panel(run)
            for run in (
                console_drill_latest(kind=DrillRunKind.DRIFT_BENCHMARK),
                console_drill_latest(kind=DrillRunKind.DRILL),
            )
            if run is not None
        ]
        return context

    def post(self, request: HttpRequest) -> HttpResponse:
        if not _can_operate(request):
            raise PermissionDenied("Only operators start drills and benchmarks.")
        form_class = START_FORMS.get(request.POST.get("kind", ""))
        if form_class is None:
            messages.error(request, "Pick the drift benchmark or the drill.")
            return self._page_with_errors(None, status=400)
        form = form_class(request.POST)
        if not form.is_valid():
            return self._page_with_errors(form, status=400)
        try:
            run = drill_run_enqueue(
                kind=form.cleaned_data["kind"],
                parameters=form.parameters(),  # type: ignore[attr-defined]
                reason=form.cleaned_data["reason"],
                started_by=request.user,
                request_id=request_id_of(request),
            )
        except DomainError as exc:
            messages.error(request, exc.detail)
            return self._page_with_errors(form, status=exc.status)
        messages.success(
            request, f"{KIND_LABELS[run.kind]} #{run.pk} started: a worker is running it."
        )
        return redirect("console-drill", run_id=run.pk)

    def _page_with_errors(self, form: Any, *, status: int) -> HttpResponse:
        """The page again with the operator's input and what is wrong with it."""
        self.start_form = form
        response = self.get(self.request)
        response.status_code = status
        return response


class DrillRunView(StaffRequiredMixin, TemplateView):
    """One run: its parameters, and its panel (polling while it runs)."""

    template_name = "drills_app/drill_run.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        run = _run(self.kwargs["run_id"])
        context["panel"] = run_panel(run)
        context["parameters"] = sorted((run.parameters or {}).items())
        return context


class DrillRunStatusView(StaffRequiredMixin, View):
    """The run's panel alone, for polling. Tells the page when the run has moved on."""

    def get(self, request: HttpRequest, run_id: int) -> HttpResponse:
        run = _run(run_id)
        response = TemplateResponse(
            request, RUN_TEMPLATE, {"panel": run_panel(run, polls=polls(request))}
        )
        since = request.GET.get("since")
        if since and since != run.status:
            # The runs list re-reads itself on the first; the second is said in the page's
            # polite live region (messages.js): the panel is swapped whole, and a live region
            # swapped in already holding its text is not announced.
            response["HX-Trigger"] = hx_trigger(CHANGED_EVENT, message=run_moved_on(run))
        return response


def run_moved_on(run: DrillRun) -> dict[str, Any]:
    """What the operator watching a run hears when it ends."""
    name = f"{KIND_LABELS.get(run.kind, run.kind)} #{run.pk}"
    if run.status == DrillRunStatus.FAILED:
        return console_message("error", f"{name} failed: {run.error[:200]}")
    verdict = "" if run.passed is None else ": passed" if run.passed else ": failed its checks"
    return console_message("success", f"{name} complete{verdict}.")


class DrillCompareView(StaffRequiredMixin, TemplateView):
    """Two runs of one kind: parameters, numbers side by side, one overlaid chart."""

    template_name = "drills_app/drill_compare.html"

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            run_ids = [int(value) for value in request.GET.getlist("run")]
        except ValueError:
            run_ids = []
        try:
            runs = console_drill_pair(run_ids=run_ids)
        except DomainError as exc:
            return self.render_to_response(self.get_context_data(error=exc), status=exc.status)
        labelled = [(run.pk, run.results or {}) for run in runs]
        context: dict[str, Any] = {"runs": runs, "label": KIND_LABELS.get(runs[0].kind)}
        context["parameter_rows"] = compare_parameter_rows(runs)
        if runs[0].kind == DrillRunKind.DRIFT_BENCHMARK:
            context["figure"] = figure_json(drift_compare_figure(labelled))
            context["drift_rows"] = compare_drift_rows(runs)
        else:
            context["figure"] = figure_json(drill_compare_figure(labelled))
            context["drill_rows"] = compare_drill_rows(runs)
        return self.render_to_response(self.get_context_data(**context))
