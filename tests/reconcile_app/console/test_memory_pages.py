"""The memory classes page and a memory's own page in the console."""

from __future__ import annotations

import pytest

from reconcile_app.services.quarantine import quarantine_apply, quarantine_create
from tests.reconcile_app.console.conftest import signed_in
from tests.reconcile_app.console.memory_world import (  # noqa: F401 (fixtures)
    basis,
    decide,
    promotion_of,
    write,
    writer_reviewer,
)

# session, user, the user's groups, the classes, the counts in one aggregate, the quarantines.
CLASSES_QUERIES = 6
# session, user, the user's groups, the record (with its writer and what it supersedes), its
# class, its own and its class's quarantines (one query), its status history, what supersedes it, its promotion, and
# its audit timeline; and the corrections upstream of it (its lineage node, the walk up, the
# corrections of the evidence reached).
MEMORY_QUERIES = 13


def class_row(page: str, name: str) -> str:
    start = page.index(f'<tr id="class-{name}"')
    return page[start : page.index("</tr>", start)]


# --- Memory classes -----------------------------------------------------------------------------


def test_every_class_is_listed_with_its_rules(auditor_browser, db):
    page = auditor_browser.get("/memory-classes/").content.decode()
    episodic = class_row(page, "episodic")
    for text in ("<strong>episodic</strong>", "What an agent saw happen", "platform-operations"):
        assert text in episodic, text
    assert '<span class="tag">episodic</span>' in episodic
    assert "30 days" in episodic and "expires at its valid_until" in episodic
    rules = class_row(page, "house-rules")
    assert "never by date" in rules and "by a reviewer other than the writer" in rules
    assert "retires only by review" in rules
    assert "own valid_until" in class_row(page, "operational")
    assert 'href="/lineage/blast-radius/?memory_class=episodic"' in episodic
    assert "trusted" in episodic


def test_counts_by_status_and_the_queue_of_suggestions(auditor_browser, agent, reviewer, basis):
    write(agent, "episodic")
    write(agent, "episodic")
    decide(write(agent), reviewer)
    write(agent, value="suggested only")

    page = auditor_browser.get("/memory-classes/").content.decode()
    episodic = class_row(page, "episodic")
    assert 'data-status="current"><span class="badge badge-green">current</span> 2' in episodic
    runbooks = class_row(page, "runbooks")
    assert 'data-status="active"><span class="badge badge-green">active</span> 1' in runbooks
    assert 'href="/promotions/?memory_class=runbooks"' in runbooks
    assert 'data-status="suggested"><span class="badge badge-blue">suggested</span> 1' in runbooks
    assert "none" in class_row(page, "house-rules")


def test_a_quarantined_class_says_so_and_links_the_quarantine(auditor_browser, operator, db):
    quarantine = quarantine_create(
        scope="memory_class", target="case-notes", reason="poisoned", actor=operator.user
    )
    quarantine_apply(quarantine_id=quarantine.quarantine_id)
    page = auditor_browser.get("/memory-classes/").content.decode()
    notes = class_row(page, "case-notes")
    assert '<span class="badge badge-purple" title="poisoned">quarantined</span>' in notes
    assert quarantine.quarantine_id in notes and 'href="/quarantine/"' in notes
    assert "trusted" in class_row(page, "episodic")


@pytest.mark.parametrize("memories", [0, 12])
def test_classes_page_query_count_does_not_grow(
    auditor_browser, agent, basis, django_assert_num_queries, memories
):
    for index in range(memories):
        write(agent, ["episodic", "case-notes", "runbooks"][index % 3])
    with django_assert_num_queries(CLASSES_QUERIES):
        response = auditor_browser.get("/memory-classes/")
    assert response.status_code == 200


def test_agents_never_reach_the_memory_pages(agent, basis):
    record = write(agent, "episodic")
    client = signed_in(agent)
    for path in ("/memory-classes/", "/promotions/", f"/memories/{record.memory_id}/"):
        assert client.get(path).status_code == 403, path


# --- One memory ---------------------------------------------------------------------------------


def test_a_memory_page_shows_every_field_and_its_history(auditor_browser, agent, basis):
    older = write(agent, "episodic", value="hold", note="Hardship approval.")
    newer = write(agent, "episodic", value="collect", supersedes=older.memory_id)

    page = auditor_browser.get(f"/memories/{older.memory_id}/").content.decode()

    fields = page[page.index('id="memory-fields"') : page.index("</dl>", page.index("memory-"))]
    for text in ("account-17", "collections", "collections_status", "Hardship approval."):
        assert text in fields, text
    assert older.valid_until.isoformat() in fields  # the class's TTL, applied at admission
    assert '<span class="badge badge-amber">superseded</span>' in page
    assert f'href="/evidence/{basis}/"' in page  # derived from
    superseded_by = page[page.index('id="superseded-by"') :]
    assert f'href="/memories/{newer.memory_id}/"' in superseded_by[:400]
    history = page[
        page.index('id="status-history"') : page.index("</table>", page.index("status-history"))
    ]
    assert history.index(">current<") < history.index(">superseded<")
    assert f"superseded by {newer.memory_id}" in history
    assert f'href="/lineage/?node=memory:{older.memory_id}"' in page
    assert f'href="/lineage/blast-radius/?node=memory:{older.memory_id}"' in page
    assert 'id="promotion"' not in page  # admitted directly: nothing to review

    later = auditor_browser.get(f"/memories/{newer.memory_id}/").content.decode()
    assert f'href="/memories/{older.memory_id}/"' in later[later.index('id="supersedes"') :]


def test_a_quarantined_memory_says_so_and_operators_may_quarantine_one(
    auditor_browser, operator_browser, operator, agent, basis
):
    record = write(agent, "episodic")
    path = f"/memories/{record.memory_id}/"
    before = operator_browser.get(path).content.decode()
    link = f'href="/quarantine/new/?scope=memory&amp;target={record.memory_id}"'
    assert link in before and 'id="memory-quarantined"' not in before
    assert link not in auditor_browser.get(path).content.decode()  # operators only
    dialog = operator_browser.get(f"/quarantine/new/?scope=memory&target={record.memory_id}")
    assert dialog.status_code == 200 and record.memory_id in dialog.content.decode()

    quarantine = quarantine_create(
        scope="memory", target=record.memory_id, reason="planted by a prompt", actor=operator.user
    )
    quarantine_apply(quarantine_id=quarantine.quarantine_id)
    after = operator_browser.get(path).content.decode()
    banner = after[after.index('id="memory-quarantined"') :]
    assert "planted by a prompt" in banner[:600] and 'href="/quarantine/"' in banner[:600]
    assert link not in after  # already quarantined
    assert 'id="class-quarantined"' not in after  # its class is not


def test_a_fact_record_links_its_fact(auditor_browser, agent, basis):
    record = write(
        agent,
        "operational",
        field="",
        fact_key="collections.account-17",
        owner="servicing-team",
        source_revision="case-service@42",
    )
    page = auditor_browser.get(f"/memories/{record.memory_id}/").content.decode()
    assert f'href="/facts/collections.account-17/#memory-{record.memory_id}"' in page
    assert "case-service@42" in page


def test_a_suggestion_says_it_is_not_in_force_and_offers_the_review(
    reviewer_browser, agent, reviewer, basis
):
    first = decide(write(agent), reviewer)
    waiting = write(agent, value="retry once", supersedes=first.memory_id)

    page = reviewer_browser.get(f"/memories/{waiting.memory_id}/").content.decode()

    banner = page[page.index('id="suggestion-banner"') :]
    assert "never in force" in banner[:600] and first.memory_id in banner[:600]
    assert "only once promoted" in page[page.index('id="supersedes"') :]
    promotion = page[page.index('id="promotion"') :]
    assert f'href="/escalations/{promotion_of(waiting).escalation_id}/"' in promotion
    assert f'action="/promotions/{promotion_of(waiting).escalation_id}/approve/"' in promotion
    assert f'action="/promotions/{promotion_of(waiting).escalation_id}/reject/"' in promotion
    assert f'<span class="mono">{first.memory_id}</span> becomes superseded' in promotion


@pytest.mark.parametrize("persona", ["operator", "auditor"])
def test_people_who_are_not_reviewers_see_no_forms(request, agent, basis, persona):
    waiting = write(agent)
    page = signed_in(request.getfixturevalue(persona)).get(f"/memories/{waiting.memory_id}/")
    html = page.content.decode()
    assert 'id="approve-form"' not in html and 'id="reject-form"' not in html
    assert "Only reviewers promote or reject suggestions." in html


def test_the_writer_sees_a_note_instead_of_the_forms(writer_reviewer, basis):
    mine = write(writer_reviewer)
    html = signed_in(writer_reviewer).get(f"/memories/{mine.memory_id}/").content.decode()
    assert "You wrote this memory; another reviewer must decide its promotion." in html
    assert 'id="approve-form"' not in html


def test_a_decided_promotion_shows_who_decided_and_why(auditor_browser, agent, reviewer, basis):
    rejected = decide(write(agent), reviewer, approve=False)
    page = auditor_browser.get(f"/memories/{rejected.memory_id}/").content.decode()
    promotion = page[page.index('id="promotion"') :]
    assert "rhys-reviewer" in promotion and "decided in a fixture" in promotion
    assert '<span class="badge badge-red">rejected</span>' in page
    assert 'data-action="memory.reject"' in page  # the audit timeline


def test_an_unknown_memory_is_404(auditor_browser, db):
    assert auditor_browser.get("/memories/mem-nothing/").status_code == 404


@pytest.mark.parametrize("later", [1, 6])
def test_memory_page_query_count_does_not_grow(
    auditor_browser, agent, reviewer, basis, django_assert_num_queries, later
):
    first = decide(write(agent), reviewer)
    # Suggestions that would each supersede it: as many rows under "superseded by".
    for index in range(later):
        write(agent, value=f"v{index}", supersedes=first.memory_id)
    with django_assert_num_queries(MEMORY_QUERIES):
        response = auditor_browser.get(f"/memories/{first.memory_id}/")
    superseded_by = response.content.decode().split('id="superseded-by"')[1].split("</dd>")[0]
    assert superseded_by.count('<span class="badge badge-blue">suggested</span>') == later


def test_memory_ids_link_to_their_page_from_the_fact_and_the_audit_log(
    estate, operator, operator_browser, basis
):
    record = write(
        operator,
        "operational",
        field="",
        fact_key="collections.account-17",
        owner="servicing-team",
        source_revision="case-service@42",
    )
    link = f'<a href="/memories/{record.memory_id}/">{record.memory_id}</a>'
    fact_page = operator_browser.get("/facts/collections.account-17/").content.decode()
    assert link in fact_page[fact_page.index('id="history"') :]
    audit = operator_browser.get("/audit/?object_kind=memory").content.decode()
    assert f'<a class="mono" href="/memories/{record.memory_id}/">' in audit
