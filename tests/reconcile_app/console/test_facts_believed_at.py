"""One fact key's page, "believed at" a recorded time: the selection, the candidates with
their statuses then, and the owner's authority then. Reading it opens and writes nothing."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from reconcile_app.canonical import rfc3339
from reconcile_app.models import Escalation, MemoryRecord
from reconcile_app.services.quarantine import quarantine_apply, quarantine_create
from reconcile_app.sources import AuthorityResult
from sandbox_app.adapter import SandboxAdapter
from sandbox_app.models import SandboxAuthorityChange
from tests.reconcile_app.facts.conftest import authority, remember

KEY = "baseline.reading-eval"
# session, user, the user's groups, the key's records, its escalations, the authority source,
# the records' statuses then, the quarantined memory classes, the audit timeline.
BELIEVED_QUERIES = 9


def page_at(browser, as_of: datetime | str, **params: str) -> str:
    asked = as_of if isinstance(as_of, str) else rfc3339(as_of)
    return browser.get(f"/facts/{KEY}/", {**params, "as_of": asked}).content.decode()


def section(page: str, element_id: str) -> str:
    start = page.index(f'id="{element_id}"')
    return page[start : page.index("</section>", start)]


def history_row(page: str, memory_id: str) -> str:
    start = page.index(f'<tr id="memory-{memory_id}"')
    return page[start : page.index("</tr>", start)]


def recorded(memory_id: str) -> datetime:
    return MemoryRecord.objects.get(memory_id=memory_id).recorded_at


@pytest.fixture
def rebaselined(registry, agent) -> str:
    """r17 with v17; then the registry moved to r18 and v18 superseded v17."""
    authority(KEY, revision="registry@r17")
    remember(agent, KEY, "reading-v17", "ckpt-0412", "registry@r17")
    authority(KEY, revision="registry@r18")
    remember(agent, KEY, "reading-v18", "ckpt-0601", "registry@r18", supersedes="reading-v17")
    return KEY


def before_the_handover() -> datetime:
    return SandboxAuthorityChange.objects.get(
        fact_key=KEY, source_revision="registry@r18"
    ).at - timedelta(microseconds=1)


def test_the_page_has_a_believed_at_picker_beside_the_date(auditor_browser, rebaselined):
    page = auditor_browser.get(f"/facts/{KEY}/").content.decode()
    start = page.index('<form id="fact-when"')
    form = page[start : page.index("</form>", start)]
    assert 'method="get"' in form and f'hx-get="/facts/{KEY}/"' in form
    assert '<input type="date" name="on"' in form
    assert re.search(r'<input type="datetime-local" name="as_of"[^>]*step="1"', form)
    assert "Believed at (UTC)" in form
    # Inside the region it swaps, so its errors and the lede come back with it.
    assert page.index('id="fact-view"') < page.index('<form id="fact-when"')
    assert "csrfmiddlewaretoken" not in form  # a GET form: nothing to protect, nothing written


def test_before_the_supersession_the_old_record_is_shown_as_then(auditor_browser, rebaselined):
    page = page_at(auditor_browser, before_the_handover(), on="2026-09-30")

    assert 'id="believed-lede"' in page
    selection = section(page, "selection")
    assert "Selection as believed then" in selection
    assert '<span class="badge badge-green">ok</span>' in selection
    assert "ckpt-0412" in selection and 'href="#memory-reading-v17"' in selection
    assert "registry@r17" in section(page, "authority")
    assert "Owner&#x27;s authority then" in page or "Owner's authority then" in page
    # Status then beside status now; the later record was not known then.
    older = history_row(page, "reading-v17")
    assert re.search(r'class="status-then"><span class="badge badge-\w+">current</span>', older)
    assert "superseded</span>" in older  # its status today
    assert "recorded later" in history_row(page, "reading-v18")


def test_after_the_supersession_the_new_record_is_shown(auditor_browser, rebaselined):
    page = page_at(auditor_browser, recorded("reading-v18"), on="2026-09-30")
    selection = section(page, "selection")
    assert "ckpt-0601" in selection and 'href="#memory-reading-v18"' in selection
    older = history_row(page, "reading-v17")
    assert re.search(r'class="status-then"><span class="badge badge-\w+">superseded</span>', older)


def test_candidates_show_their_statuses_then(auditor_browser, rebaselined):
    # Between the owner's move to r18 and v18: only v17 (r17) was known, and current.
    page = page_at(
        auditor_browser, before_the_handover() + timedelta(microseconds=2), on="2026-09-30"
    )
    candidates = section(page, "selection")
    assert "no current record" in candidates
    assert re.search(
        r'href="#memory-reading-v17">reading-v17</a> <span class="badge badge-\w+">current</span>',
        candidates,
    )


def test_an_owner_without_history_is_said_to_be_one(auditor_browser, rebaselined, monkeypatch):
    def present_only(self, fact_key, as_of=None):
        if as_of is not None:
            return self.authority_history_missing(fact_key, as_of)
        return AuthorityResult(status="ok", owner="eval-registry", source_revision="registry@r18")

    monkeypatch.setattr(SandboxAdapter, "authority", present_only)
    page = page_at(auditor_browser, recorded("reading-v18"))
    assert "current authority unavailable" in section(page, "selection")
    note = page[page.index('id="no-history"') :]
    assert "eval-registry keeps no authority history" in note[: note.index("</p>")]
    # Today's page has no such note: the owner answers the present.
    assert 'id="no-history"' not in auditor_browser.get(f"/facts/{KEY}/").content.decode()


@pytest.mark.parametrize(
    ("as_of", "message"),
    [("soon", "Use a date and time"), ("2999-01-01T00:00", "in the future")],
)
def test_a_bad_time_is_reported_and_today_is_shown(auditor_browser, rebaselined, as_of, message):
    page = page_at(auditor_browser, as_of)
    alert = page[page.index('role="alert"') :]
    assert message in alert[: alert.index("</div>")]
    assert 'id="believed-lede"' not in page
    assert "Current selection" in page


@pytest.mark.parametrize("as_of", ["0001-01-01T00:00", "0001-01-01T03:00:00Z"])
def test_a_time_before_the_fact_zones_first_day_is_reported(
    auditor_browser, rebaselined, settings, as_of
):
    # West of UTC, the first instants of year 1 fall on a day before the calendar's first:
    # the rule has no date to apply on. It answered 500 (the API says 400).
    settings.RECONCILE_FACT_TIMEZONE = "America/Santiago"
    response = auditor_browser.get(f"/facts/{KEY}/", {"as_of": as_of})
    assert response.status_code == 200
    page = response.content.decode()
    alert = page[page.index('role="alert"') :]
    assert "no date in the fact timezone" in alert[: alert.index("</div>")]
    assert "Current selection" in page


def test_an_ambiguity_then_is_shown_and_never_escalated(auditor_browser, registry, agent):
    authority(KEY)
    remember(agent, KEY, "reading-a", "ckpt-1", "registry@r18")
    remember(agent, KEY, "reading-b", "ckpt-2", "registry@r18")

    with CaptureQueriesContext(connection) as queries:
        page = page_at(auditor_browser, timezone.now(), on="2026-09-30")

    assert "authority ambiguous" in section(page, "selection")
    assert not Escalation.objects.exists()
    assert not [
        query["sql"]
        for query in queries.captured_queries
        if query["sql"].lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE"))
        and "django_session" not in query["sql"]
    ]


def test_a_quarantined_class_is_named_and_history_stays_readable(
    auditor_browser, rebaselined, operator
):
    quarantine = quarantine_create(
        scope="memory_class", target="operational", reason="poisoned summaries", actor=operator.user
    )
    quarantine_apply(quarantine_id=quarantine.quarantine_id)
    page = page_at(auditor_browser, recorded("reading-v18"), on="2026-09-30")
    assert "ckpt-0601" in section(page, "selection")
    banner = page[page.index('id="quarantined-then"') :]
    assert '<span class="mono">operational</span>' in banner[: banner.index("</div>")]


def test_each_recorded_time_links_to_the_second_after_it(auditor_browser, rebaselined):
    page = auditor_browser.get(f"/facts/{KEY}/").content.decode()
    moment = recorded("reading-v17")
    second_after = (moment.replace(microsecond=0) + timedelta(seconds=1)).strftime(
        "%Y-%m-%dT%H:%M:%S"
    )
    link = f'href="/facts/{KEY}/?as_of={second_after}"'
    assert link in history_row(page, "reading-v17")


def test_the_picker_shows_a_linked_or_offset_time_in_its_own_form(auditor_browser, rebaselined):
    asked = recorded("reading-v18")
    offset = asked.astimezone(timezone.get_fixed_timezone(120)).isoformat()
    page = page_at(auditor_browser, offset)
    assert 'role="alert"' not in page
    assert 'id="believed-lede"' in page
    # In UTC, to the second (a datetime-local input holds nothing finer, and no offset).
    value = asked.strftime("%Y-%m-%dT%H:%M:%S")
    assert f'<input type="datetime-local" name="as_of" value="{value}"' in page
    assert "ckpt-0601" in section(page, "selection")  # the question was the exact instant


def test_htmx_gets_the_region_with_its_picker(auditor_browser, rebaselined):
    body = auditor_browser.get(
        f"/facts/{KEY}/",
        {"as_of": rfc3339(recorded("reading-v18"))},
        HTTP_HX_REQUEST="true",
    ).content.decode()
    assert body.lstrip().startswith('<section id="fact-view"')
    assert "<html" not in body and '<form id="fact-when"' in body


@pytest.mark.parametrize("records", [1, 6])
def test_believed_at_query_count_is_fixed(
    auditor_browser, registry, agent, django_assert_num_queries, monkeypatch, records
):
    authority(KEY)
    previous = None
    for index in range(records):
        extra = {"supersedes": previous} if previous else {}
        remember(agent, KEY, f"many-{index}", f"ckpt-{index}", "registry@r18", **extra)
        previous = f"many-{index}"
    # The owner is another system (network, for a real one): counted apart from the page's.
    monkeypatch.setattr(
        SandboxAdapter,
        "authority",
        lambda self, fact_key, as_of=None: AuthorityResult(
            status="ok", owner="eval-registry", source_revision="registry@r18", as_of=as_of
        ),
    )
    as_of = rfc3339(timezone.now())
    with django_assert_num_queries(BELIEVED_QUERIES):
        response = auditor_browser.get(f"/facts/{KEY}/", {"as_of": as_of})
    assert response.status_code == 200
    assert f"ckpt-{records - 1}" in section(response.content.decode(), "selection")
