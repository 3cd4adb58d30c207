"""axe-core (vendored under tests/browser/assets, served by no one: injected by the test) on
every console page, lists and detail pages alike, in the light and the dark theme.

The estate is built through the real protocol so each detail page has content: a lineage
chain (evidence → snapshot → decision → effect with receipt and readback → memories, a fact),
a correction, an escalation on an ambiguous fact, a contradiction, an unknown outcome and the
bulk job that re-checked it, a draft contract to diff, a quarantine, and stored drill runs.
No serious or critical violation may remain on any of them.
"""

from __future__ import annotations

import json
from contextlib import nullcontext
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.browser.test_console_habits import sign_in
from tests.browser.test_console_offline import (  # noqa: F401 (fixtures)
    CHROMIUM,
    PASSWORD,
    browser_page,
)
from tests.reconcile_app.effects.conftest import collectible  # noqa: F401 (a fixture)
from tests.reconcile_app.facts.conftest import registry  # noqa: F401 (a fixture)

AXE = Path(__file__).parent / "assets" / "axe.min.js"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's Chromium"),
]


@pytest.fixture
def estate_pages(
    transactional_db: Any,
    collectible: Any,
    registry: Any,
    agent: Any,
    eager_tasks: Any,
    tmp_path: Path,
) -> dict[str, Any]:
    """A small estate with something on every page; the paths to check, by page."""
    from drills_app.choices import DrillRunKind
    from drills_app.drift import DriftParameters
    from drills_app.runs import drill_run_execute, drill_run_start
    from reconcile_app.models import Contract, Effect
    from reconcile_app.services.bulk_jobs import bulk_job_create
    from reconcile_app.services.corrections import correction_create
    from reconcile_app.services.quarantine import quarantine_create
    from tests.browser.test_console_triage import tasks_lost
    from tests.conftest import COLLECTIONS, make_person
    from tests.reconcile_app.console.conftest import (
        ambiguous_fact,
        commit_effect,
        issue_snapshot,
    )
    from tests.reconcile_app.console.contract_world import load_draft
    from tests.reconcile_app.lineage_chain import FACT_KEY, build_chain

    operator = make_person("olivia-operator", "operator", password=PASSWORD)
    chain = build_chain(agent, key="l-1", capture=lambda execute: nullcontext())
    correction = correction_create(
        evidence_id="ev-collect",
        reason="Entered against the wrong account",
        actor=operator.user,
        request_id="axe-test",
    )
    escalation = ambiguous_fact(agent, agent)
    issue_snapshot(agent, subject="account-31", claimed="collect")  # a contradiction
    with tasks_lost():
        unknown, rechecked = (
            commit_effect(agent, f"axe-unknown-{n}", fault="timeout_after_commit") for n in (1, 2)
        )
    # The job runs on commit (eager): its page shows a finished job with its items.
    job = bulk_job_create(
        actor=operator.user,
        action="readback",
        reason="Owner outage: answers lost after commit",
        keys=[rechecked.idempotency_key],
        request_id="axe-bulk",
    )
    quarantine_create(
        scope="memory_class", target="case-notes", reason="Poisoned import.", actor=operator.user
    )
    draft = load_draft(tmp_path)
    active = Contract.objects.filter(decision_class=COLLECTIONS, status="active").get()
    drill = drill_run_execute(
        run_id=drill_run_start(kind=DrillRunKind.DRILL, parameters={"repeat": 1}).pk
    )
    drifts = [
        drill_run_execute(
            run_id=drill_run_start(
                kind=DrillRunKind.DRIFT_BENCHMARK,
                parameters=DriftParameters(episodes=30, max_horizon=6, seed=seed).as_dict(),
            ).pk
        )
        for seed in (3, 4)
    ]
    contract = f"/contracts/{COLLECTIONS}"
    source = Effect.objects.get(idempotency_key=chain.effect_key).source.name
    paths = {
        "overview": "/",
        "snapshots": "/snapshots/",
        "snapshot": f"/snapshots/{chain.snapshot_id}/",
        "contradictions": "/contradictions/",
        "escalations": "/escalations/",
        "escalation": f"/escalations/{escalation.escalation_id}/",
        "promotions": "/promotions/",
        "effects": "/effects/",
        "effect": f"/effects/{chain.effect_key}/",
        "unknown effect": f"/effects/{unknown.idempotency_key}/",
        # Outside `effects/`: `/effects/bulk/` is the page of an effect keyed "bulk".
        "bulk preview": f"/bulk/effects/?do=readback&scope=selected&key={unknown.idempotency_key}",
        "bulk preview, all matching": "/bulk/effects/?do=not_executed&scope=filter&status=unknown",
        "contradictions bulk preview": "/contradictions/bulk/?do=resolve&scope=filter&status=open",
        "job": f"/jobs/{job.job_id}/",
        "job's audit rows": "/audit/?request_id=axe-bulk",
        "facts": "/facts/",
        "fact": f"/facts/{FACT_KEY}/",
        "ambiguous fact": f"/facts/{escalation.fact_key}/",
        "memory classes": "/memory-classes/",
        "memory": f"/memories/{chain.memory_id}/",
        "fact memory": f"/memories/{chain.fact_memory_id}/",
        "evidence": "/evidence/ev-collect/",
        "correction": f"/corrections/{correction.correction_id}/",
        "contracts": "/contracts/",
        "contract": f"{contract}/{quote(active.version)}/",
        "draft contract": f"{contract}/{quote(draft.version)}/",
        "contract diff": f"{contract}/diff/",
        "lineage explorer": "/lineage/?node=evidence:ev-collect",
        "lineage": "/lineage/",
        "blast radius form": "/lineage/blast-radius/",
        "blast radius": "/lineage/blast-radius/?node=evidence:ev-collect",
        "quarantine": "/quarantine/",
        "quarantine form (no JavaScript)": f"/quarantine/new/?scope=source&target={source}",
        "drills": "/drills/",
        "drill run": f"/drills/{drill.pk}/",
        "drift run": f"/drills/{drifts[0].pk}/",
        "drill compare": f"/drills/compare/?run={drifts[0].pk}&run={drifts[1].pk}",
        "audit": "/audit/",
        # Pages as an operator's click leaves them (see STEPS): a replay's result, a row's
        # audit timeline unfolded in place.
        "snapshot replay": f"/snapshots/{chain.snapshot_id}/",
        "audit timeline": "/contradictions/",
        "tokens": "/tokens/",
        "go-to 404": "/go/?q=nothing-here",
    }
    return {"operator": operator, "paths": paths}


def _replay(page: Any) -> None:
    page.click("#replay-as-recorded")
    page.wait_for_selector("#replay-result :first-child")


def _unfold_history(page: Any) -> None:
    page.click("details.history summary")
    page.wait_for_selector("details.history .history-body p")


# What to do on a page before checking it: the replay's result and the audit timeline are
# fragments the console swaps into its pages; they are checked where they are shown.
STEPS = {"snapshot replay": _replay, "audit timeline": _unfold_history}


def axe_violations(page: Any) -> list[dict[str, Any]]:
    # Evaluated through the DevTools protocol: the page's CSP (rightly) refuses inline scripts.
    page.evaluate(AXE.read_text() + "\n;undefined")
    results = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
        ".map(v => ({id: v.id, impact: v.impact,"
        " nodes: v.nodes.slice(0, 3).map(n => [n.target, n.failureSummary])}))"
    )
    return [v for v in results if v["impact"] in ("serious", "critical")]


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_console_page_has_no_serious_accessibility_violations(
    live_server, browser_page, estate_pages, theme
):
    page, traffic = browser_page
    page.emulate_media(color_scheme=theme)
    sign_in(page, live_server.url, estate_pages["operator"].user.username)
    found: dict[str, Any] = {}
    statuses: dict[str, int] = {}
    for name, path in estate_pages["paths"].items():
        response = page.goto(f"{live_server.url}{path}")
        statuses[name] = response.status if response else 0
        page.wait_for_load_state("networkidle")
        if name in STEPS:
            STEPS[name](page)
            page.wait_for_load_state("networkidle")
        assert page.evaluate("document.documentElement.dataset.theme || ''") in ("", theme)
        violations = axe_violations(page)
        if violations:
            found[name] = violations
    # Every page was really there (the go-to box's 404 is a page too: it says what was tried).
    expected = {name: 200 for name in statuses}
    expected["go-to 404"] = 404
    assert statuses == expected
    assert not found, json.dumps(found, indent=1)
    assert traffic.external == []


def test_at_390px_tables_and_charts_scroll_inside_their_own_box(
    live_server, browser_page, estate_pages
):
    from tests.browser.test_console_habits import page_overflow

    page, traffic = browser_page
    page.set_viewport_size({"width": 390, "height": 844})
    sign_in(page, live_server.url, estate_pages["operator"].user.username)
    paths = estate_pages["paths"]
    for name in ("overview", "effects", "snapshot", "lineage explorer", "effect", "job"):
        page.goto(f"{live_server.url}{paths[name]}")
        page.wait_for_load_state("networkidle")
        # Something wide is really there: a table or a drawn chart.
        assert page.locator("main table, main .js-plotly-plot").count() >= 1, name
        overflow, wide = page_overflow(page)
        assert overflow <= 0 and not wide, (name, overflow, wide)
        # A table wider than the screen scrolls in its box, which the keyboard can reach.
        for box in page.locator("main .table-scroll").all():
            if box.evaluate("b => b.scrollWidth > b.clientWidth + 1"):
                assert box.get_attribute("tabindex") == "0" or box.locator("a[href]").count()
    assert traffic.external == []
