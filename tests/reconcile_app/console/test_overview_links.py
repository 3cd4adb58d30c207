"""The overview tells the truth and leads somewhere: every bar and point opens the list it
counts (and that list holds as many rows), the window is 1 h, 24 h or 7 d, the open-outcomes
card counts failed postconditions, and the reconcile time is the whole request."""

from __future__ import annotations

import html as html_lib
import re
import time
from typing import Any

from django.db.models import Min
from django.http import QueryDict

from reconcile_app.console.filtersets import ConsoleQuarantineFilterSet
from reconcile_app.models import DecisionSnapshot, Effect, Quarantine, ReconcileTiming
from reconcile_app.selectors.metrics import operational_metrics
from reconcile_app.services.quarantine import quarantine_create, quarantine_lift
from tests.reconcile_app.console.effects_world import mixed_effects  # noqa: F401 (a fixture)
from tests.reconcile_app.console.test_overview import (
    figures,
    reconcile_through_the_api,
    traffic,  # noqa: F401 (a fixture)
)


def links_of(figure: dict[str, Any]) -> list[tuple[str, Any, str]]:
    """(trace, x or y, URL) of every bar or point of a figure."""
    found = []
    for trace in figure["data"]:
        categories = trace["y"] if trace.get("orientation") == "h" else trace["x"]
        for category, data in zip(categories, trace["customdata"], strict=True):
            found.append((trace["name"], category, data[-1]))
    return found


def rows_listed(client: Any, url: str) -> int:
    body = client.get(url).content.decode()
    table = re.search(r"<tbody>(.*?)</tbody>", body, re.S)
    return len(re.findall(r"<tr\b", table.group(1))) if table else 0


def test_every_bar_and_point_carries_the_list_it_counts(operator_browser, traffic):
    drawn = figures(operator_browser.get("/").content.decode())
    for name, figure in drawn.items():
        for trace, category, url in links_of(figure):
            assert url.startswith("/"), (name, trace, category)
            assert operator_browser.get(url).status_code == 200, (name, url)


def test_a_refusal_bar_opens_exactly_the_snapshots_it_counts(operator_browser, traffic):
    refusals = figures(operator_browser.get("/").content.decode())["refusals"]
    for trace in refusals["data"]:
        for code, count, data in zip(trace["y"], trace["x"], trace["customdata"], strict=True):
            url = data[-1]
            if not count:
                continue  # a result without this code: a zero-width segment
            assert f"reason_code={code}" in url and f"result={trace['name']}" in url
            assert rows_listed(operator_browser, url) == count, url


def test_open_item_bars_open_their_filtered_queues(operator_browser, traffic):
    drawn = figures(operator_browser.get("/").content.decode())
    escalations = drawn["escalations"]["data"][0]
    assert [data[-1] for data in escalations["customdata"]] == [
        "/escalations/?status=open&code=contradiction"
    ]
    assert rows_listed(operator_browser, escalations["customdata"][0][-1]) == escalations["x"][0]
    quarantines = drawn["quarantines"]["data"][0]
    assert quarantines["customdata"][0][-1] == (
        "/quarantine/?scope=memory_class&status=applying&status=applied"
    )
    unknown = drawn["unknown"]["data"][0]
    assert unknown["customdata"][0][-1] == "/effects/overview-unknown-key/"


def test_the_window_picker_offers_an_hour_a_day_and_a_week(operator_browser, traffic):
    for hours, label in ((1, "1 h"), (24, "24 h"), (168, "7 d")):
        body = operator_browser.get(f"/?hours={hours}").content.decode()
        assert re.search(rf'href="/\?hours={hours}"[^>]*aria-current="true">{label}<', body)
        hourly = figures(body)["verdicts"]["data"][0]["x"]
        assert hours <= len(hourly) <= hours + 1
    assert 'aria-current="true">24 h<' in operator_browser.get("/").content.decode()


def test_a_window_the_page_does_not_offer_says_so(operator_browser, traffic):
    body = operator_browser.get("/?hours=5").content.decode()
    assert re.search(r'id="window-error">[^<]*“5” is not a window', body)
    assert 'aria-current="true">24 h<' in body


def test_the_open_outcomes_card_counts_failed_postconditions(operator_browser, mixed_effects):
    body = operator_browser.get("/").content.decode()
    assert re.search(r'id="stat-unknown">1<', body)
    assert re.search(r'id="stat-postcondition-failed">1<', body)
    assert 'href="/effects/?status=postcondition_failed"' in body


def test_reconcile_time_is_the_whole_request(operator_browser, estate, agent):
    started = time.perf_counter()
    snapshot_id = reconcile_through_the_api(agent)["snapshot_id"]
    wall_ms = (time.perf_counter() - started) * 1000.0
    timing = ReconcileTiming.objects.get(snapshot__snapshot_id=snapshot_id)
    snapshot = DecisionSnapshot.objects.annotate(first_read=Min("reads__read_at")).get(
        snapshot_id=snapshot_id
    )
    # It spans more than reads → decision (what the card used to show) and no more than the
    # client saw; it began before the snapshot was decided.
    decision_ms = (snapshot.issued_at - snapshot.first_read).total_seconds() * 1000.0
    assert decision_ms < timing.duration_ms <= wall_ms
    assert timing.received_at <= snapshot.issued_at
    body = operator_browser.get("/").content.decode()
    assert "Reconcile request time" in body and "1 requests timed" in body
    assert "from the request's arrival to the snapshot written" in body


def test_drills_decide_in_process_and_are_not_timed(traffic):
    assert ReconcileTiming.objects.count() == 1  # the one API request, not the drill's


def test_the_resolution_bar_opens_the_outcomes_settled_in_the_window(operator_browser, traffic):
    body = operator_browser.get("/").content.decode()
    (url,) = {data[-1] for data in figures(body)["resolution"]["data"][0]["customdata"]}
    assert url.startswith("/effects/?status=all&settled_after=")
    settled = operational_metrics()["resolution_seconds"]["resolved"]
    assert settled >= 1
    # Exactly the outcomes the bars summarise, not every effect (the open one, the drill's
    # other effects); the card's own link says the same.
    assert rows_listed(operator_browser, url) == settled < Effect.objects.count()
    assert f'href="{html_lib.escape(url)}">Settled outcomes' in body
    # The list says what narrows it, and offers no "all N matching": the bulk selection
    # does not carry this filter.
    listed = operator_browser.get(url).content.decode()
    assert 'id="settled-note"' in listed and 'id="bulk-form"' not in listed
    assert 'id="bulk-form"' in operator_browser.get("/effects/?status=all").content.decode()
    assert operator_browser.get("/effects/?status=all&settled_after=nonsense").status_code == 200


def test_a_quarantine_bar_opens_the_active_ones_only(operator_browser, operator, traffic):
    lifted = quarantine_create(
        scope="memory_class", target="old-notes", reason="poisoned", actor=operator.user
    )
    quarantine_lift(quarantine_id=lifted.quarantine_id, reason="clean", actor=operator.user)
    quarantines = figures(operator_browser.get("/").content.decode())["quarantines"]["data"][0]
    assert quarantines["x"] == [1]
    url = quarantines["customdata"][0][-1]
    listed = ConsoleQuarantineFilterSet(
        data=QueryDict(url.split("?", 1)[1]), queryset=Quarantine.objects.all()
    ).qs
    assert listed.count() == 1 < Quarantine.objects.filter(scope="memory_class").count()
    assert operator_browser.get(url).status_code == 200


def test_every_bar_and_point_is_also_a_link_under_its_chart(operator_browser, traffic):
    """A keyboard or a screen reader reaches what a click on the drawing opens."""
    body = operator_browser.get("/?hours=168").content.decode()
    for name, figure in figures(body).items():
        wanted = {
            url
            for trace in figure["data"]
            for value, data in zip(
                trace["x"] if trace.get("orientation") == "h" else trace["y"],
                trace["customdata"],
                strict=True,
            )
            if value
            for url in [data[-1]]
        }
        block = re.search(
            rf'<details class="chart-data" id="chart-{name}-links">(.*?)</details>', body, re.S
        )
        listed = set(map(html_lib.unescape, re.findall(r'href="([^"]+)"', block.group(1))))
        assert wanted and listed == wanted, name


def test_the_refusals_headline_opens_each_result_it_adds_up(operator_browser, traffic):
    """ "N of M decisions did not allow" adds deny, refuse and escalate; the card's own link
    opens the denied alone, so each part links the snapshots it counts."""
    page = operator_browser.get("/").content.decode()
    total = int(re.search(r'id="stat-refused">(\d+)<', page).group(1))
    parts = re.findall(r'<a href="([^"]+)" id="stat-refused-(\w+)">(\d+) \w+</a>', page)
    assert {result for _, result, _ in parts} >= {"deny", "refuse"}
    assert sum(int(count) for _, _, count in parts) == total
    for url, result, count in parts:
        url = html_lib.unescape(url)
        assert f"result={result}" in url
        listed = operator_browser.get(url).content.decode()
        assert re.search(rf"\d+\u2013\d+ of {count}\b", listed), url  # en dash
