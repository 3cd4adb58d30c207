"""Charts in a real browser, offline, under the console's CSP: the overview and the drills page
draw every Plotly figure from the locally served plotly.js; an operator starts a benchmark,
watches its panel poll while no worker has taken it, and sees its charts appear without a
reload once it has run; two runs compare side by side.

Same closed network as test_console_offline: Debian's Chromium, Django's live server, every
request to another host aborted and reported. Every console message is kept: none may be a
CSP violation (no inline script, no eval). Waits use locators, never `wait_for_function`
(the CSP forbids the eval it needs).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import pytest
from playwright.sync_api import expect

from drills_app.choices import DrillRunKind
from drills_app.drift import DriftParameters
from drills_app.scenarios import SCENARIOS
from tests.browser.test_console_offline import (
    CHROMIUM,
    PASSWORD,
    SCREENSHOTS,
    browser_page,  # noqa: F401 (a fixture)
)
from tests.browser.test_console_triage import assert_clean, sign_in

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's Chromium at /usr/bin/chromium"
    ),
]

OVERVIEW_CHARTS = 8
DRIFT = DriftParameters(episodes=60, max_horizon=12, seed=5)


@contextmanager
def worker_not_started() -> Iterator[None]:
    """The run is enqueued but no worker has taken it yet."""
    from drills_app import tasks

    delay = tasks.execute_drill_run.delay
    tasks.execute_drill_run.delay = lambda *args, **kwargs: None
    try:
        yield
    finally:
        tasks.execute_drill_run.delay = delay


def run_now(kind: str, parameters: dict[str, Any]) -> Any:
    from drills_app.runs import drill_run_execute, drill_run_start

    return drill_run_execute(run_id=drill_run_start(kind=kind, parameters=parameters).pk)


@pytest.fixture
def charts_data(transactional_db: Any, estate: Any, operator: Any) -> dict[str, Any]:
    """A stored drill (refusals, verdicts, contradictions, an escalation, a settled unknown
    outcome), an unknown outcome still open, a quarantine, and two benchmark runs."""
    from reconcile_app.services.quarantine import quarantine_create
    from tests.conftest import make_person
    from tests.reconcile_app.api.test_metrics import open_unknown_outcome

    person = make_person("oscar-operator", "operator", password=PASSWORD)
    drill = run_now(DrillRunKind.DRILL, {"repeat": 1})
    assert drill.status == "complete", drill.error
    open_unknown_outcome("charts-unknown", minutes_ago=25)
    quarantine_create(
        scope="memory_class", target="case-notes", reason="Poisoned import.", actor=operator.user
    )
    first = run_now(DrillRunKind.DRIFT_BENCHMARK, DRIFT.as_dict())
    second = run_now(
        DrillRunKind.DRIFT_BENCHMARK,
        replace(DRIFT, omission_rate=0.05).as_dict(),
    )
    return {"operator": person, "drill": drill, "drifts": (first, second)}


@pytest.fixture
def console_messages(browser_page: Any) -> list[str]:
    page, _ = browser_page
    messages: list[str] = []
    page.on("console", lambda message: messages.append(f"{message.type}: {message.text}"))
    page.on("pageerror", lambda error: messages.append(f"pageerror: {error}"))
    return messages


def assert_charts_drawn(page: Any, scope: str, count: int) -> None:
    """Every chart block in `scope` became a Plotly plot with an SVG inside."""
    expect(page.locator(f"{scope} [data-chart]")).to_have_count(count)
    expect(page.locator(f"{scope} [data-chart][data-ready='true']")).to_have_count(count)
    expect(page.locator(f"{scope} [data-chart].js-plotly-plot")).to_have_count(count)
    expect(page.locator(f"{scope} [data-chart] svg.main-svg").first).to_be_visible()
    for index in range(count):
        chart = page.locator(f"{scope} [data-chart]").nth(index)
        assert chart.locator("svg.main-svg").count() >= 1, chart.get_attribute("id")


def assert_no_csp_violation(messages: list[str]) -> None:
    violations = [text for text in messages if "Content Security Policy" in text]
    assert not violations, violations
    errors = [text for text in messages if text.startswith(("error", "pageerror"))]
    assert not errors, errors


def test_overview_and_drills_draw_every_chart_offline(
    live_server, browser_page, console_messages, charts_data
):
    page, traffic = browser_page
    base = live_server.url
    sign_in(page, base, charts_data["operator"].user.username, "/")

    # The overview: eight charts, each drawn from its JSON block by charts.js.
    assert_charts_drawn(page, ".overview-grid", OVERVIEW_CHARTS)
    assert traffic.statuses.get("/static/vendor/plotly.min.js") == 200
    assert traffic.statuses.get("/static/reconcile/charts.js") == 200
    expect(page.locator("nav a.active")).to_have_text("Overview")
    expect(page.locator("#stat-unknown")).to_have_text("1")
    expect(page.locator("#chart-unknown")).to_contain_text("charts-unknown-key")
    expect(page.locator("#chart-quarantines")).to_contain_text("memory class")
    page.screenshot(path=str(SCREENSHOTS / "console-overview.png"), full_page=True)

    # A card leads to where the operator acts.
    page.click("#card-unknown .card-head a")
    page.wait_for_url(f"{base}/effects/")

    # The drills page: the latest benchmark (two charts) and the latest drill (one).
    page.goto(f"{base}/drills/")
    second = charts_data["drifts"][1]
    drill = charts_data["drill"]
    assert_charts_drawn(page, f"#run-{second.pk}", 2)
    assert_charts_drawn(page, f"#run-{drill.pk}", 1)
    expect(page.locator(f"#run-{drill.pk}-scenarios tbody tr")).to_have_count(len(SCENARIOS))
    expect(page.locator("#drill-runs tbody tr")).to_have_count(3)
    page.screenshot(path=str(SCREENSHOTS / "console-drills.png"), full_page=True)

    assert_no_csp_violation(console_messages)
    assert_clean(traffic)


def test_operator_starts_a_benchmark_and_watches_it_finish_without_reloading(
    live_server, browser_page, console_messages, charts_data
):
    from drills_app.models import DrillRun
    from drills_app.runs import drill_run_execute

    page, traffic = browser_page
    base = live_server.url
    sign_in(page, base, charts_data["operator"].user.username, "/drills/")

    # No worker takes the run yet: its page shows it waiting and asks every 2 s.
    page.fill("#drift-episodes", "120")
    page.fill("#drift-reason", "Compare with last week's run")
    with worker_not_started():
        page.click("#start-drift-submit")
        page.wait_for_url(f"{base}/drills/*/")
    run = DrillRun.objects.order_by("-pk").first()
    assert run.status == "running" and run.parameters["episodes"] == 120
    panel = f"#run-{run.pk}"
    expect(page.locator(f"{panel}[data-status='running'][data-polling='true']")).to_be_visible()
    expect(page.locator(".message-success")).to_contain_text(f"#{run.pk} started")
    page.evaluate("window.__notReloaded = true")

    # The worker (played by the test) runs it: the panel swaps to the results and draws them.
    drill_run_execute(run_id=run.pk)
    expect(page.locator(f"{panel}[data-status='complete']")).to_be_visible(timeout=8_000)
    assert_charts_drawn(page, panel, 2)
    expect(page.locator(f"{panel}-horizons tbody tr")).to_have_count(11)
    assert page.evaluate("window.__notReloaded") is True
    page.screenshot(path=str(SCREENSHOTS / "console-drill-run.png"), full_page=True)

    # Two benchmark runs, side by side: parameters that differ are marked, one overlaid chart.
    first, second = charts_data["drifts"]
    page.goto(f"{base}/drills/?kind=drift_benchmark")
    page.check(f"#drill-run-{first.pk} input[name=run]")
    page.check(f"#drill-run-{second.pk} input[name=run]")
    page.click("#compare-submit")
    page.wait_for_url(f"{base}/drills/compare/*")
    assert_charts_drawn(page, ".compare-grid", 1)
    expect(page.locator("#compare-parameters tr.differs")).to_have_count(1)
    expect(page.locator("#compare-parameters tr.differs")).to_contain_text("Omission")
    page.screenshot(path=str(SCREENSHOTS / "console-drills-compare.png"), full_page=True)

    assert_no_csp_violation(console_messages)
    assert_clean(traffic)
