"""The lineage explorer, a correction and replay in a real browser, on a closed network.

Same closed network as test_console_offline: Debian's Chromium, Django's live server, every
request to another host aborted and reported. The graph must render from the locally served
plotly.js under the console's content security policy (no inline script), a click on a node
must open that node's page, the depth control must redraw through htmx, and replay must say
"exact" for a snapshot replayed as recorded.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.browser.test_console_offline import (
    CHROMIUM,
    PASSWORD,
    SCREENSHOTS,
    browser_page,  # noqa: F401 (a fixture)
)
from tests.reconcile_app.effects.conftest import collectible  # noqa: F401 (a fixture)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's Chromium at /usr/bin/chromium"
    ),
]

GRAPH = "#lineage-graph.js-plotly-plot"


@pytest.fixture
def lineage_data(
    transactional_db: Any, collectible: Any, agent: Any, eager_tasks: Any
) -> dict[str, Any]:
    """Three decisions on ev-collect, each released (receipt and readback), with memories;
    then an operator's correction of ev-collect."""
    from contextlib import nullcontext

    from reconcile_app.services.corrections import correction_create
    from tests.conftest import make_person
    from tests.reconcile_app.lineage_chain import build_chain

    chains = [
        build_chain(agent, key=f"l-{index}", capture=lambda execute: nullcontext())
        for index in range(1, 4)
    ]
    operator = make_person("olivia-operator", "operator", password=PASSWORD)
    correction = correction_create(
        evidence_id="ev-collect",
        reason="Entered against the wrong account",
        actor=operator.user,
        request_id="browser-test",
    )
    return {"operator": operator, "chains": chains, "correction": correction}


def sign_in(page: Any, base: str, username: str, path: str) -> None:
    page.goto(f"{base}{path}")
    assert "/accounts/login/" in page.url
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(re.escape(path.split("?")[0]) + r"(\?.*)?$"))


def node_point(page: Any, node_id: str) -> dict:
    """Where a node is drawn, read from the live Plotly figure: its trace, its index in the
    trace, the URL a click opens, and the centre of its marker on screen."""
    return page.evaluate(
        """([selector, nodeId]) => {
          const plot = document.querySelector(selector);
          const [kind, ...rest] = nodeId.split(":");
          const ref = rest.join(":");
          for (let t = 0; t < plot.data.length; t++) {
            const custom = plot.data[t].customdata || [];
            for (let i = 0; i < custom.length; i++) {
              if (custom[i][1] === kind && custom[i][2] === ref) {
                const trace = plot.querySelectorAll(".scatterlayer .trace")[t];
                const box = trace.querySelectorAll("path.point")[i].getBoundingClientRect();
                return {trace: t, index: i, url: custom[i][0],
                        x: box.x + box.width / 2, y: box.y + box.height / 2};
              }
            }
          }
          return null;
        }""",
        [GRAPH, node_id],
    )


def test_lineage_graph_renders_offline_and_clicks_through(live_server, browser_page, lineage_data):
    page, traffic = browser_page
    base = live_server.url
    csp_errors: list[str] = []
    page.on(
        "console",
        lambda message: (
            csp_errors.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    chain = lineage_data["chains"][0]
    sign_in(page, base, lineage_data["operator"].user.username, "/lineage/?node=ev-collect")

    # A bare evidence id resolves to its node; the graph is drawn by plotly.js from here.
    page.wait_for_url(re.compile(r"node=evidence:ev-collect&depth=3$"))
    page.wait_for_selector(f"{GRAPH}[data-ready=true]")
    assert traffic.statuses.get("/static/vendor/plotly.min.js") == 200
    assert traffic.statuses.get("/static/reconcile/lineage.js") == 200
    assert page.locator(f"{GRAPH} .main-svg").count() >= 1
    drawn = page.locator("#drawn-nodes tbody tr").count()
    assert page.locator(f"{GRAPH} .scatterlayer path.point").count() == drawn
    # Every layer that has nodes is titled, left to right.
    texts = page.locator(f"{GRAPH} .annotation-text").all_text_contents()
    titles = [text for text in texts if text]  # edge arrows are text-less annotations
    assert titles[:3] == ["Evidence", "Snapshots · reducers", "Decisions"]
    page.screenshot(path=str(SCREENSHOTS / "lineage-explorer.png"), full_page=True)

    # Each node knows its page: the snapshot opens the snapshot, the effect its effect page.
    snapshot = node_point(page, f"snapshot:{chain.snapshot_id}")
    assert snapshot["url"] == f"/snapshots/{chain.snapshot_id}/"
    assert node_point(page, f"effect:{chain.effect_key}")["url"] == f"/effects/{chain.effect_key}/"
    assert node_point(page, f"memory:{chain.fact_memory_id}")["url"] == (
        f"/memories/{chain.fact_memory_id}/"
    )
    # Hovering shows the node's details; clicking it opens its page.
    page.mouse.move(snapshot["x"], snapshot["y"])
    page.wait_for_selector(".hoverlayer .hovertext")
    assert chain.snapshot_id in (page.locator(".hoverlayer .hovertext").text_content() or "")
    page.mouse.click(snapshot["x"], snapshot["y"])
    page.wait_for_url(re.compile(re.escape(f"/snapshots/{chain.snapshot_id}/") + "$"))

    # Replay from the snapshot page (htmx POST with the CSRF header): as recorded is exact;
    # with today's corrections the decision changes from allow to refuse.
    page.click("#replay-as-recorded")
    page.wait_for_selector(".replay-outcome[data-mode=as_recorded]")
    assert "exact — hash matches" in page.locator("#replay-result").inner_text()
    page.click("#replay-corrected")
    page.wait_for_selector(".replay-outcome[data-mode=corrected]")
    row = page.locator("#replay-differences tr", has_text="decision.result")
    assert row.locator("td").all_inner_texts() == ["decision.result", "allow", "refuse"]
    page.locator("#replay").screenshot(path=str(SCREENSHOTS / "lineage-replay.png"))

    # The depth control redraws the graph region through htmx, and the URL follows.
    page.goto(f"{base}/lineage/?node=snapshot:{chain.snapshot_id}&depth=3")
    page.wait_for_selector(f"{GRAPH}[data-ready=true]")
    before = page.locator(f"{GRAPH} path.point").count()
    page.select_option("#graph-depth", "1")
    page.wait_for_url(re.compile(r"depth=1$"))
    page.wait_for_selector(f"{GRAPH}[data-ready=true]")
    after = page.locator(f"{GRAPH} path.point").count()
    assert after == page.locator("#drawn-nodes tbody tr").count() < before
    assert page.locator("#graph-depth").input_value() == "1"

    # The correction's report lists what to review, each linked.
    page.goto(f"{base}/corrections/{lineage_data['correction'].correction_id}/")
    assert page.locator("#blast-list tbody tr").count() == 3
    assert page.locator("#blast-list .badge", has_text="tainted").count() == 3
    page.click("#blast-tabs a[data-kind=effect]")
    page.wait_for_url(re.compile(r"kind=effect"))
    page.wait_for_selector("#blast-list a[href='/effects/l-1/']")
    page.screenshot(path=str(SCREENSHOTS / "lineage-correction.png"), full_page=True)

    assert not csp_errors, csp_errors
    assert traffic.external == [], f"tried to leave the closed network: {traffic.external}"
    failed = {path: status for path, status in traffic.statuses.items() if status >= 400}
    assert not failed, failed
