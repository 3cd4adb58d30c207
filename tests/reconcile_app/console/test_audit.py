"""The audit page (filters in the URL, pages, htmx partial, CSV export) and the timeline each
object page shows from the same trail."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta

import pytest
from django.utils import timezone

from reconcile_app.models import AuditEvent, Contradiction, EvidenceEntry, Quarantine
from reconcile_app.selectors.audit import CSV_COLUMNS, audit_changes, object_timeline
from reconcile_app.services.audit import audit_record
from reconcile_app.services.quarantine import quarantine_create, quarantine_lift
from tests.reconcile_app.console.conftest import signed_in

# session, user, the user's groups, the paginator's count, the page of rows, and the filter
# form's suggestions (actors, actions and kinds in one query).
LIST_QUERIES = 6
PARTIAL_QUERIES = 5  # the suggestions sit outside the swapped region
# session, user, the user's groups, the rows (streamed in chunks: one query for a small export).
EXPORT_QUERIES = 4


def rows(page: str) -> list[str]:
    """The audit row ids on a page, in order."""
    import re

    return re.findall(r'<tr id="audit-(\d+)"', page)


@pytest.fixture
def trail(estate, operator, reviewer) -> dict[str, AuditEvent]:
    """A quarantine created and lifted by the operator, and a reviewer's approval."""
    quarantine = quarantine_create(
        scope="source",
        target="case-service",
        reason="Corrupt exports.",
        actor=operator.user,
        request_id="req-create",
    )
    quarantine_lift(
        quarantine_id=quarantine.quarantine_id,
        reason="Fixed.",
        actor=operator.user,
        request_id="req-lift",
    )
    approve = audit_record(
        actor=reviewer.user,
        action="escalation.approve",
        object_kind="escalation",
        object_ref="esc_1",
        reason="Registry agrees.",
        request_id="req-approve",
        before={"status": "open"},
        after={"status": "approved"},
    )
    return {
        "create": AuditEvent.objects.get(action="quarantine.create"),
        "lift": AuditEvent.objects.get(action="quarantine.lift"),
        "approve": approve,
    }


def test_lists_every_action_newest_first_with_before_and_after(auditor_browser, trail):
    page = auditor_browser.get("/audit/").content.decode()
    ids = rows(page)
    assert ids[:3] == [str(trail[name].pk) for name in ("approve", "lift", "create")]
    assert "rhys-reviewer" in page and "olivia-operator" in page
    assert '<span class="tag mono">quarantine.lift</span>' in page
    assert "Corrupt exports." in page and "Fixed." in page
    # before → after, field by field; the object links to its page.
    assert '<span class="before">open</span> → <span class="after">approved</span>' in page
    assert 'href="/escalations/esc_1/"' in page
    assert f'href="/quarantine/#quarantine-{trail["lift"].object_ref}"' in page
    assert 'title="req-approve"' in page


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("actor=rhys-reviewer", ["approve"]),
        ("action=quarantine.lift", ["lift"]),
        ("action_prefix=quarantine.", ["lift", "create"]),
        ("object_kind=escalation", ["approve"]),
        ("object_ref=esc_1", ["approve"]),
        ("request_id=req-lift", ["lift"]),
    ],
)
def test_filters_live_in_the_url(auditor_browser, trail, query, expected):
    page = auditor_browser.get(f"/audit/?{query}").content.decode()
    assert rows(page) == [str(trail[name].pk) for name in expected]


def test_date_range_filters(auditor_browser, trail):
    now = timezone.now()
    later = (now + timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%S")
    earlier = (now - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M")
    assert rows(auditor_browser.get(f"/audit/?since={later}").content.decode()) == []
    assert len(rows(auditor_browser.get(f"/audit/?since={earlier}").content.decode())) >= 3
    assert rows(auditor_browser.get(f"/audit/?until={earlier}").content.decode()) == []
    page = auditor_browser.get(f"/audit/?since={earlier}").content.decode()
    assert 'type="datetime-local"' in page


def test_an_invalid_date_is_reported_on_the_form(auditor_browser, trail):
    page = auditor_browser.get("/audit/?since=yesterday").content.decode()
    assert 'class="form-error" role="alert"' in page


def test_pages_of_twenty_five(auditor_browser, operator):
    for index in range(30):
        audit_record(
            actor=operator.user, action="test.step", object_kind="test", object_ref=str(index)
        )
    first = auditor_browser.get("/audit/?action=test.step").content.decode()
    assert len(rows(first)) == 25 and "1\N{EN DASH}25 of 30" in first
    second = auditor_browser.get("/audit/?action=test.step&page=2").content.decode()
    assert len(rows(second)) == 5
    # Page links keep the filters.
    assert 'href="?action=test.step&amp;page=2"' in first


def test_htmx_request_gets_the_region_with_an_export_link_for_the_same_filters(
    auditor_browser, trail
):
    body = auditor_browser.get(
        "/audit/?object_kind=quarantine&page=1", HTTP_HX_REQUEST="true"
    ).content.decode()
    assert body.lstrip().startswith('<section id="audit-region"')
    assert "<html" not in body
    assert 'href="/audit/export.csv?object_kind=quarantine"' in body


@pytest.mark.parametrize("count", [1, 40])
def test_query_count_does_not_grow_with_rows(
    auditor_browser, operator, django_assert_num_queries, count
):
    for index in range(count):
        audit_record(
            actor=operator.user,
            action="test.step",
            object_kind="test",
            object_ref=str(index),
            before={"n": index},
            after={"n": index + 1},
        )
    with django_assert_num_queries(LIST_QUERIES):
        assert auditor_browser.get("/audit/").status_code == 200
    with django_assert_num_queries(PARTIAL_QUERIES):
        auditor_browser.get("/audit/?object_kind=test", HTTP_HX_REQUEST="true")
    with django_assert_num_queries(EXPORT_QUERIES):
        response = auditor_browser.get("/audit/export.csv?object_kind=test")
        b"".join(response.streaming_content)


# --- CSV export -----------------------------------------------------------------------------


def exported(client, query: str = "") -> list[dict[str, str]]:
    response = client.get(f"/audit/export.csv?{query}")
    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith('attachment; filename="audit-')
    text = b"".join(response.streaming_content).decode()
    reader = csv.DictReader(io.StringIO(text))
    assert tuple(reader.fieldnames or ()) == CSV_COLUMNS
    return list(reader)


def test_export_streams_the_filtered_rows(auditor_browser, trail):
    lines = exported(auditor_browser, "action_prefix=quarantine.")
    assert [line["action"] for line in lines] == ["quarantine.lift", "quarantine.create"]
    lift = lines[0]
    assert lift["actor"] == "olivia-operator"
    assert lift["object_kind"] == "quarantine"
    assert lift["object_ref"] == trail["lift"].object_ref
    assert lift["reason"] == "Fixed." and lift["request_id"] == "req-lift"
    # Lifted before the worker applied it (nothing runs on commit inside a test).
    assert json.loads(lift["before"]) == {"status": "applying"}
    assert json.loads(lift["after"]) == {"status": "lifted", "effects_resumed": 0}
    assert lift["at"].endswith("Z")
    create = lines[1]
    assert create["before"] == ""  # nothing before a creation
    assert json.loads(create["after"])["target"] == "case-service"


def test_export_takes_every_filter(auditor_browser, trail):
    assert [line["request_id"] for line in exported(auditor_browser, "actor=rhys-reviewer")] == [
        "req-approve"
    ]
    assert exported(auditor_browser, "object_ref=nothing") == []


def test_export_neutralises_spreadsheet_formulas(auditor_browser, operator):
    audit_record(
        actor=operator.user,
        action="test.step",
        object_kind="test",
        object_ref="1",
        reason='=HYPERLINK("http://example.invalid")',
        after={"note": "=1+1"},
    )
    line = exported(auditor_browser, "action=test.step")[0]
    assert line["reason"] == '\'=HYPERLINK("http://example.invalid")'
    assert json.loads(line["after"]) == {"note": "=1+1"}  # JSON stays JSON


def test_export_with_an_invalid_filter_is_a_400(auditor_browser, trail):
    response = auditor_browser.get("/audit/export.csv?since=yesterday")
    assert response.status_code == 400
    assert b"since" in response.content


@pytest.mark.parametrize("persona", ["operator", "reviewer", "auditor"])
def test_people_in_a_role_read_and_export_the_trail(request, trail, persona):
    client = signed_in(request.getfixturevalue(persona))
    assert client.get("/audit/").status_code == 200
    assert client.get("/audit/export.csv").status_code == 200


def test_agents_and_visitors_cannot(agent, trail, client):
    assert signed_in(agent).get("/audit/").status_code == 403
    assert signed_in(agent).get("/audit/export.csv").status_code == 403
    assert client.get("/audit/export.csv").status_code == 302


# --- Before / after and timelines -----------------------------------------------------------


def test_changes_list_only_what_changed():
    assert audit_changes(None, None) == []
    changes = audit_changes({"status": "open", "owner": "x"}, {"status": "done", "owner": "x"})
    assert [(c.name, c.before, c.after) for c in changes] == [("status", "open", "done")]
    created = audit_changes(None, {"status": "applying"})
    assert created[0].added and created[0].after == "applying"
    removed = audit_changes({"hold": True}, {})
    assert removed[0].removed
    scalar = audit_changes("a", "b")
    assert [(c.name, c.before, c.after) for c in scalar] == [("", "a", "b")]


def test_object_timeline_is_oldest_first_and_bounded(operator, django_assert_num_queries):
    for index in range(5):
        audit_record(
            actor=operator.user, action=f"test.{index}", object_kind="test", object_ref="one"
        )
    audit_record(actor=operator.user, action="test.other", object_kind="test", object_ref="two")
    with django_assert_num_queries(1):
        timeline = object_timeline(object_kind="test", object_ref="one", limit=3)
    assert [entry.event.action for entry in timeline.entries] == ["test.2", "test.3", "test.4"]
    assert timeline.truncated
    assert timeline.audit_query == "object_kind=test&object_ref=one"
    whole_kind = object_timeline(object_kind="test")
    assert len(whole_kind.entries) == 6 and not whole_kind.truncated


def test_effect_page_shows_its_operator_actions(operator_browser, unknown_effect):
    operator_browser.post("/effects/u-1/escalate/", {"reason": "Ledger and readback disagree."})
    page = operator_browser.get("/effects/u-1/").content.decode()
    timeline = page.split('id="audit-timeline-effect-u-1"', 1)[1]
    assert 'data-action="effect.escalate"' in timeline
    assert "Ledger and readback disagree." in timeline
    assert 'href="/audit/?object_kind=effect&amp;object_ref=u-1"' in timeline


def test_escalation_page_shows_the_decision(reviewer_browser, escalation):
    reviewer_browser.post(
        f"/escalations/{escalation.escalation_id}/approve/",
        {"rationale": "Registry agrees.", "selected_ref": escalation.candidate_refs[0]},
    )
    page = reviewer_browser.get(f"/escalations/{escalation.escalation_id}/").content.decode()
    timeline = page.split('class="panel audit-timeline"', 1)[1]
    assert 'data-action="escalation.approve"' in timeline and "Registry agrees." in timeline
    assert '<span class="before">open</span> → <span class="after">approved</span>' in timeline


def test_snapshot_page_says_when_nobody_acted_on_it(auditor_browser, make_snapshot):
    snapshot = make_snapshot()
    page = auditor_browser.get(f"/snapshots/{snapshot.snapshot_id}/").content.decode()
    timeline = page.split('class="panel audit-timeline"', 1)[1]
    assert "No operator actions recorded on this snapshot." in timeline
    assert "<table" not in timeline.split("</section>", 1)[0]


def test_snapshot_page_says_how_far_along_the_evidence_chain_it_read(
    auditor_browser, make_snapshot
):
    snapshot = make_snapshot()
    seen = snapshot.content["ledger_seq"]
    assert seen == EvidenceEntry.objects.order_by("seq").values_list("seq", flat=True).last()
    page = auditor_browser.get(f"/snapshots/{snapshot.snapshot_id}/").content.decode()
    cutoffs = page.split('id="cutoffs-h"', 1)[1].split("</section>", 1)[0]
    assert "Evidence read up to" in cutoffs and f"entry #{seen}<" in cutoffs


def test_contradiction_rows_unfold_their_history(operator_browser, make_snapshot):
    make_snapshot(claimed="collect")
    row = Contradiction.objects.get()
    url = f"/audit/timeline/contradiction/{row.pk}/?compact=1"
    page = operator_browser.get("/contradictions/").content.decode()
    assert f'hx-get="{url}"' in page and 'hx-trigger="click once"' in page
    before = operator_browser.get(url).content.decode()
    assert "No operator actions recorded on this contradiction." in before
    assert 'class="panel' not in before  # compact: no panel inside the table row
    operator_browser.post(f"/contradictions/{row.pk}/resolve/", {"note": "Owner confirmed."})
    after = operator_browser.get(url).content.decode()
    assert 'data-action="contradiction.resolve"' in after and "Owner confirmed." in after


def test_timeline_endpoint_is_for_people_in_a_role(agent, auditor_browser, estate):
    assert signed_in(agent).get("/audit/timeline/quarantine/").status_code == 403
    assert auditor_browser.get("/audit/timeline/quarantine/?limit=zero").status_code == 200


def test_quarantine_rows_are_audited_where_the_quarantine_is(operator_browser, estate):
    operator_browser.post(
        "/quarantine/new/",
        {"scope": "source", "target": "case-service", "reason": "r", "confirm": "case-service"},
    )
    quarantine = Quarantine.objects.get()
    timeline = operator_browser.get(
        f"/audit/timeline/quarantine/{quarantine.quarantine_id}/"
    ).content.decode()
    assert 'data-action="quarantine.create"' in timeline
    assert "olivia-operator" in timeline


@pytest.mark.parametrize(
    ("kind", "ref", "after", "links"),
    [
        ("job", "job_0a1b", None, ["/jobs/job_0a1b/"]),
        ("evidence", "ev-7", None, ["/evidence/ev-7/"]),
        (
            "evidence",
            "ev-7",
            {"correction_id": "cor_9", "entry": "ev-8"},
            ["/evidence/ev-7/", "/corrections/cor_9/"],
        ),
        ("fact", "fk-1", None, ["/facts/fk-1/"]),
        ("drill_run", "12", None, ["/drills/12/"]),
        ("contract", "collections@1.2", None, ["/contracts/collections/1.2/"]),
        ("contradiction", "4", None, []),
        ("principal", "agent-1", None, []),
    ],
)
def test_audit_rows_link_the_pages_their_objects_have(
    auditor_browser, operator, kind, ref, after, links
):
    audit_record(
        actor=operator.user, action=f"{kind}.test", object_kind=kind, object_ref=ref, after=after
    )
    page = auditor_browser.get("/audit/", {"action": f"{kind}.test"}).content.decode()
    cell = page[page.index('<tr id="audit-') :]
    cell = cell[: cell.index("</tr>")]
    import re

    assert re.findall(r'href="([^"]+)"', cell) == links
    assert ref in cell
