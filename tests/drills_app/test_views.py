"""The drills page: operators start runs (enqueued for a worker), everyone in a role reads the
results as charts with the numbers beside them, a running run polls, two runs compare.

Runs are made through the real services (`drill_run_start` + `drill_run_execute`, as the
commands do) with tiny parameters; the charts are checked from the JSON the page embeds.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.test import Client

from drills_app.charts import (
    drift_accuracy_figure,
    drift_compare_figure,
    drift_stale_figure,
    drill_compare_figure,
    drill_metrics_figure,
)
from drills_app.choices import DrillRunKind, DrillRunStatus
from drills_app.drift import DriftParameters
from drills_app.models import DrillRun
from drills_app.runs import drill_run_execute, drill_run_fail, drill_run_start
from drills_app.views import CHANGED_EVENT, MAX_POLLS
from tests.reconcile_app.console.conftest import signed_in

# session, user, the user's groups (roles), latest benchmark, latest drill, runs count, page.
PAGE_QUERIES = 7
PARTIAL_QUERIES = 5  # the runs region only: the latest runs sit outside it
RUN_QUERIES = 4  # session, user, groups, the run
COMPARE_QUERIES = 4  # session, user, groups, both runs

TINY_DRIFT = DriftParameters(episodes=40, max_horizon=6, seed=7)
DRIFT_POST = {
    "kind": "drift_benchmark",
    "episodes": "30",
    "min_horizon": "2",
    "max_horizon": "5",
    "interval": "10",
    "mutation_rate": "0.22",
    "omission_rate": "0.18",
    "seed": "3",
    "reason": "Compare with last week's run",
}
DRILL_POST = {"kind": "drill", "repeat": "2", "reason": "After the owner's upgrade"}


def drift_run(**changes: Any) -> DrillRun:
    parameters = DriftParameters(**{**TINY_DRIFT.as_dict(), **changes})
    run = drill_run_start(kind=DrillRunKind.DRIFT_BENCHMARK, parameters=parameters.as_dict())
    return drill_run_execute(run_id=run.pk)


def drill_run(**parameters: Any) -> DrillRun:
    run = drill_run_start(kind=DrillRunKind.DRILL, parameters={"repeat": 1, **parameters})
    return drill_run_execute(run_id=run.pk)


def figures(html: str) -> dict[str, dict[str, Any]]:
    """Every figure the page embeds, by its chart id."""
    blocks = re.findall(r'<script type="application/json" id="([^"]+)-data">(.*?)</script>', html)
    return {chart_id: json.loads(body) for chart_id, body in blocks}


def traces(figure: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {trace["name"]: trace for trace in figure["data"]}


@pytest.fixture
def benchmark(db: Any) -> DrillRun:
    return drift_run()


@pytest.fixture
def drill(db: Any) -> DrillRun:
    return drill_run()


# --- Starting a run -------------------------------------------------------------------------


def test_operator_gets_both_start_forms_with_console_defaults(operator_browser):
    html = operator_browser.get("/drills/").content.decode()
    assert 'id="start-drift"' in html and 'id="start-drill"' in html
    assert 'name="episodes" value="500"' in html  # fewer than the seed's 2,000: quick
    assert 'name="min_horizon" value="2"' in html and 'name="max_horizon" value="12"' in html
    assert 'name="mutation_rate" value="0.22"' in html
    assert 'name="omission_rate" value="0.18"' in html
    assert 'name="repeat" value="3"' in html
    assert 'id="results-only"' not in html


def test_operator_starts_a_benchmark_that_a_worker_runs_after_commit(
    operator, operator_browser, eager_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = operator_browser.post("/drills/", DRIFT_POST)
    run = DrillRun.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/drills/{run.pk}/"
    assert len(callbacks) == 1, "enqueued once, on commit"
    assert run.started_by == operator.user
    assert run.parameters == DriftParameters(episodes=30, max_horizon=5, seed=3).as_dict()
    assert run.status == DrillRunStatus.COMPLETE
    assert [row["horizon"] for row in run.results["horizons"]] == [2, 3, 4, 5]


def test_operator_starts_a_drill_and_it_waits_for_a_worker(
    operator_browser, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = operator_browser.post("/drills/", DRILL_POST)
    run = DrillRun.objects.get()
    assert response.status_code == 302 and len(callbacks) == 1
    assert (run.kind, run.status, run.parameters["repeat"]) == ("drill", "running", 2)
    page = operator_browser.get(response["Location"]).content.decode()
    assert "started: a worker is running it" in page
    assert 'data-status="running"' in page and 'data-polling="true"' in page


def test_bad_parameters_are_shown_beside_their_fields_and_start_nothing(operator_browser):
    response = operator_browser.post(
        "/drills/", {**DRIFT_POST, "min_horizon": "9", "max_horizon": "3", "episodes": "0"}
    )
    html = response.content.decode()
    assert response.status_code == 400
    assert "Must be at least the shortest horizon." in html
    assert "Ensure this value is greater than or equal to 1." in html
    assert 'name="min_horizon" value="9"' in html, "the operator's input is kept"
    assert DrillRun.objects.count() == 0


def test_a_seed_past_64_bits_is_refused_beside_its_field(operator_browser):
    response = operator_browser.post("/drills/", {**DRIFT_POST, "seed": "9" * 4200})
    assert response.status_code == 400
    assert "Ensure this value is less than or equal to" in response.content.decode()
    assert DrillRun.objects.count() == 0


def test_an_unknown_kind_is_refused(operator_browser):
    response = operator_browser.post("/drills/", {"kind": "fire"})
    assert response.status_code == 400
    assert DrillRun.objects.count() == 0


def test_a_second_drill_while_one_runs_is_refused_with_409(operator_browser):
    busy = drill_run_start(kind=DrillRunKind.DRILL, parameters={"repeat": 1})
    response = operator_browser.post("/drills/", {**DRILL_POST, "repeat": "1"})
    assert response.status_code == 409
    assert f"drill run #{busy.pk} is still running" in response.content.decode()
    assert DrillRun.objects.count() == 1


@pytest.mark.parametrize("persona", ["reviewer", "auditor", "agent"])
def test_only_operators_may_start_a_run(request, persona):
    client = signed_in(request.getfixturevalue(persona))
    for data in (DRIFT_POST, DRILL_POST):
        assert client.post("/drills/", data).status_code == 403
    anonymous = Client().post("/drills/", DRIFT_POST)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")
    assert DrillRun.objects.count() == 0


@pytest.mark.parametrize("persona", ["reviewer", "auditor"])
def test_people_in_other_roles_see_results_but_no_start_form(request, persona, benchmark):
    html = signed_in(request.getfixturevalue(persona)).get("/drills/").content.decode()
    assert 'id="results-only"' in html
    assert 'id="start-drift"' not in html and 'id="start-drill"' not in html
    assert f"run-{benchmark.pk}-stale" in figures(html)


def test_agents_and_visitors_do_not_see_the_page(agent, benchmark):
    assert signed_in(agent).get("/drills/").status_code == 403
    assert signed_in(agent).get(f"/drills/{benchmark.pk}/").status_code == 403
    assert Client().get("/drills/").status_code == 302


# --- Results: charts and the numbers beside them --------------------------------------------


def test_benchmark_results_chart_stale_rate_against_horizon_with_seed_points(
    operator_browser, benchmark
):
    html = operator_browser.get(f"/drills/{benchmark.pk}/").content.decode()
    drawn = figures(html)
    stale = traces(drawn[f"run-{benchmark.pk}-stale"])
    horizons = benchmark.results["horizons"]
    assert stale["Stale-checkpoint rate"]["x"] == [2, 3, 4, 5, 6]
    assert stale["Stale-checkpoint rate"]["y"] == [r["stale_checkpoint_rate"] for r in horizons]
    assert stale["Seed 002 (2,000 episodes)"]["x"] == [2, 12]
    assert stale["Seed 002 (2,000 episodes)"]["y"] == [0.453, 0.985]
    accuracy = traces(drawn[f"run-{benchmark.pk}-accuracy"])
    assert accuracy["Reconstruction exact"]["y"] == [1.0] * 5
    assert accuracy["Narrative: final accuracy"]["y"] == [
        r["final_narrative_accuracy"] for r in horizons
    ]
    # The numbers beside: one row per horizon, and the checks.
    table = re.search(r'id="run-\d+-horizons">(.*?)</table>', html, re.S).group(1)
    assert table.count("<tr data-horizon=") == 5
    last = horizons[-1]
    assert f"{last['stale_checkpoint_rate']:.1%}" in table
    assert "Reconstruction exact at every horizon" in html
    assert 'data-status="complete"' in html and 'data-polling="false"' in html
    assert "hx-trigger" not in re.search(r"<section id=\"run-\d+\".*?>", html, re.S).group(0)


def test_drill_results_chart_protocol_against_baseline_per_metric(operator_browser, drill):
    html = operator_browser.get(f"/drills/{drill.pk}/").content.decode()
    bars = traces(figures(html)[f"run-{drill.pk}-metrics"])
    assert set(bars) == {"Protocol", "Baseline"}
    labels = [label.replace("<br>", " ") for label in bars["Protocol"]["x"]]
    assert labels == [
        "Stale-memory escape",
        "Unsupported authorisation",
        "Duplicate effects",
        "Silent failures",
        "False refusals",
    ]
    assert bars["Protocol"]["y"] == [0.0] * 5
    assert bars["Baseline"]["y"][:4] == [1.0, 1.0, 1.0, 1.0]  # the baseline fails visibly
    assert bars["Baseline"]["text"][0] == "5/5"
    assert "The protocol let nothing through" in html
    assert html.count("<tr data-scenario=") == 11  # lost_dedupe_record joined the suite
    assert html.count('<tr data-metric="') == 5
    assert "Stale-memory escape \N{MULTIPLICATION SIGN}1" in html  # per scenario, baseline


def test_a_failed_run_shows_its_error(operator_browser):
    run = drill_run_start(kind=DrillRunKind.DRIFT_BENCHMARK, parameters={})
    drill_run_fail(run_id=run.pk, error="RuntimeError: owner exploded")
    html = operator_browser.get(f"/drills/{run.pk}/").content.decode()
    assert 'data-status="failed"' in html and "RuntimeError: owner exploded" in html
    assert not figures(html)


def test_unknown_run_is_404(operator_browser):
    assert operator_browser.get("/drills/999/").status_code == 404
    assert operator_browser.get("/drills/999/status/").status_code == 404


# --- Progress without reloading -------------------------------------------------------------


def test_a_running_run_polls_its_panel_until_it_has_finished(operator_browser):
    run = drill_run_start(kind=DrillRunKind.DRIFT_BENCHMARK, parameters=TINY_DRIFT.as_dict())
    page = operator_browser.get(f"/drills/{run.pk}/").content.decode()
    assert f'hx-get="/drills/{run.pk}/status/?since=running&amp;polls=1"' in page
    assert 'hx-trigger="every 2s"' in page and 'data-polling="true"' in page

    still = operator_browser.get(f"/drills/{run.pk}/status/?since=running&polls=1")
    assert "HX-Trigger" not in still
    assert 'polls=2"' in still.content.decode()

    drill_run_execute(run_id=run.pk)
    done = operator_browser.get(f"/drills/{run.pk}/status/?since=running&polls=2")
    html = done.content.decode()
    told = json.loads(done["HX-Trigger"])
    assert CHANGED_EVENT in told, "the runs list re-reads itself"
    # Said to a screen reader: the panel is swapped whole, its own live region with it.
    assert told["console-message"] == {
        "level": "success",
        "text": f"Drift benchmark #{run.pk} complete.",
    }
    assert 'data-status="complete"' in html and "hx-trigger" not in html
    assert f"run-{run.pk}-stale" in figures(html), "the swapped-in panel carries its charts"


def test_polling_gives_up_on_a_run_no_worker_takes(operator_browser):
    run = drill_run_start(kind=DrillRunKind.DRILL, parameters={"repeat": 1})
    html = operator_browser.get(
        f"/drills/{run.pk}/status/?since=running&polls={MAX_POLLS}"
    ).content.decode()
    assert 'data-polling="false"' in html and "stopped refreshing" in html


# --- Past runs and comparison ---------------------------------------------------------------


def test_past_runs_list_each_run_with_its_headline_and_filter_by_kind(
    operator_browser, benchmark, drill
):
    html = operator_browser.get("/drills/").content.decode()
    assert f'id="drill-run-{benchmark.pk}"' in html and f'id="drill-run-{drill.pk}"' in html
    first, last = benchmark.results["horizons"][0], benchmark.results["horizons"][-1]
    assert f"{first['stale_checkpoint_rate']:.1%}</strong> @2" in html
    assert f"{last['stale_checkpoint_rate']:.1%}</strong> @6" in html
    assert "protocol let <strong>0</strong> through · baseline <strong>14</strong>" in html
    partial = operator_browser.get("/drills/?kind=drill", HTTP_HX_REQUEST="true")
    region = partial.content.decode()
    assert region.lstrip().startswith("<section") or 'id="drill-runs-region"' in region
    assert "<html" not in region
    assert f'id="drill-run-{drill.pk}"' in region
    assert f'id="drill-run-{benchmark.pk}"' not in region


def test_two_benchmarks_compare_side_by_side_with_differences_marked(operator_browser, db):
    first = drift_run()
    second = drift_run(omission_rate=0.05, max_horizon=4)
    html = operator_browser.get(f"/drills/compare/?run={first.pk}&run={second.pk}").content.decode()
    overlaid = traces(figures(html)["compare-chart"])
    assert overlaid[f"#{first.pk} stale-checkpoint rate"]["x"] == [2, 3, 4, 5, 6]
    assert overlaid[f"#{second.pk} stale-checkpoint rate"]["x"] == [2, 3, 4]
    differs = re.findall(r'<tr class="differs"><th scope="row">([^<]+)</th>', html)
    assert differs == ["Longest horizon", "Omission"]
    assert html.count("<tr data-horizon=") == 5
    assert "—" in html, "a horizon only one run reached shows a dash for the other"


def test_two_drills_compare_arm_by_arm(operator_browser, db):
    first = drill_run(scenarios=["superseded_memory", "missing_dedupe_record"])
    second = drill_run(scenarios=["superseded_memory"])
    html = operator_browser.get(f"/drills/compare/?run={first.pk}&run={second.pk}").content.decode()
    bars = traces(figures(html)["compare-chart"])
    assert set(bars) == {
        f"#{first.pk} protocol",
        f"#{first.pk} baseline",
        f"#{second.pk} protocol",
        f"#{second.pk} baseline",
    }
    assert bars[f"#{first.pk} baseline"]["text"][2] == "1/1"  # a duplicate effect
    assert bars[f"#{second.pk} baseline"]["text"][2] == "0/0"
    assert re.findall(r'<tr class="differs"><th scope="row">([^<]+)</th>', html) == ["Scenarios"]


def test_compare_refuses_what_cannot_be_compared(operator_browser, benchmark, drill):
    mixed = operator_browser.get(f"/drills/compare/?run={benchmark.pk}&run={drill.pk}")
    assert (
        mixed.status_code == 400
        and "only runs of the same kind compare" in mixed.content.decode().lower()
    )
    one = operator_browser.get(f"/drills/compare/?run={benchmark.pk}")
    assert one.status_code == 400 and "pick two different runs" in one.content.decode().lower()
    assert operator_browser.get("/drills/compare/?run=x&run=y").status_code == 400
    missing = operator_browser.get(f"/drills/compare/?run={benchmark.pk}&run=999")
    assert missing.status_code == 404


# --- Query counts ---------------------------------------------------------------------------


@pytest.mark.parametrize("extra_runs", [0, 4])
def test_query_counts_do_not_grow_with_runs(
    operator_browser, db, django_assert_num_queries, extra_runs
):
    first, second = drift_run(), drift_run(seed=8)
    latest_drill = drill_run()
    for index in range(extra_runs):
        drift_run(seed=20 + index)
        drill_run(scenarios=["superseded_memory"])
    with django_assert_num_queries(PAGE_QUERIES):
        assert operator_browser.get("/drills/").status_code == 200
    with django_assert_num_queries(PARTIAL_QUERIES):
        operator_browser.get("/drills/?kind=drill", HTTP_HX_REQUEST="true")
    with django_assert_num_queries(RUN_QUERIES):
        assert operator_browser.get(f"/drills/{latest_drill.pk}/").status_code == 200
    with django_assert_num_queries(RUN_QUERIES):
        operator_browser.get(f"/drills/{latest_drill.pk}/status/?since=running&polls=3")
    with django_assert_num_queries(COMPARE_QUERIES):
        operator_browser.get(f"/drills/compare/?run={first.pk}&run={second.pk}")


# --- The chart functions, on plain data -----------------------------------------------------


def test_drift_figures_say_so_when_a_run_has_no_horizons():
    for make in (drift_stale_figure, drift_accuracy_figure):
        figure = make({})
        assert not figure.data
        assert figure.layout.annotations[0].text == "No horizons in this run"
    assert not drift_compare_figure([(1, {}), (2, {})]).data


def test_drill_metrics_figure_plots_rates_over_exposed_trials_with_counts_on_top():
    totals = {
        "protocol": {
            "stale_memory_escapes": 0,
            "stale_memory_escapes_exposed": 4,
            "stale_memory_escapes_rate": 0.0,
        },
        "baseline": {
            "stale_memory_escapes": 3,
            "stale_memory_escapes_exposed": 4,
            "stale_memory_escapes_rate": 0.75,
            "silent_failures_exposed": 0,
            "silent_failures_rate": None,
        },
    }
    bars = {trace.name: trace for trace in drill_metrics_figure({"totals": totals}).data}
    assert bars["Baseline"].y[0] == 0.75 and bars["Baseline"].text[0] == "3/4"
    assert bars["Baseline"].y[3] == 0.0 and bars["Baseline"].text[3] == "0/0"  # not exposed
    assert bars["Protocol"].text[0] == "0/4"
    assert len(drill_compare_figure([(1, {"totals": totals}), (2, {"totals": totals})]).data) == 4
