"""Pages that say what is true, each found by trying it as an operator would (issue 17,
point 6): an auditor reaches an evidence entry's blast radius, filters that refuse a value say
so, text filters forgive case and partial ids, and quarantine actions confirm and link."""

from __future__ import annotations

import html
import json
import re

from reconcile_app.models import Escalation, Quarantine
from reconcile_app.services.quarantine import quarantine_apply, quarantine_create
from tests.reconcile_app.console.conftest import ambiguous_fact
from tests.reconcile_app.console.quarantine_steps import (  # noqa: F401 (a fixture)
    CASE,
    create,
    lift,
    quarantined,
    row_of,
)
from tests.reconcile_app.console.test_blast_radius import rows
from tests.reconcile_app.facts.conftest import registry  # noqa: F401 (a fixture)
from tests.reconcile_app.lineage_chain import (  # noqa: F401 (fixtures)
    chain,
    collectible,
)


def test_the_blast_radius_form_takes_an_evidence_id(chain, auditor_browser):
    by_evidence = auditor_browser.get(
        "/lineage/blast-radius/?evidence=ev-collect&kind=memory"
    ).content.decode()
    assert 'id="entry-evidence" value="ev-collect"' in by_evidence
    assert 'Blast radius of <span class="mono">evidence ev-collect</span>' in by_evidence
    by_node = auditor_browser.get(
        "/lineage/blast-radius/?node=evidence:ev-collect&kind=memory"
    ).content.decode()
    assert (
        set(rows(by_evidence))
        == set(rows(by_node))
        == {
            f"memory:{chain.memory_id}",
            f"memory:{chain.fact_memory_id}",
        }
    )


def test_an_evidence_page_links_its_blast_radius(chain, auditor_browser):
    page = auditor_browser.get("/evidence/ev-collect/").content.decode()
    link = re.search(r'<a href="([^"]+)" id="evidence-blast-radius">Blast radius</a>', page)
    assert link and link.group(1) == "/lineage/blast-radius/?evidence=ev-collect"
    assert auditor_browser.get(link.group(1)).status_code == 200


# --- Quarantine: confirmations, counts that link, a refused snapshot names its quarantine ---


def test_quarantining_through_htmx_confirms_on_the_page(operator_browser, estate):
    response = create(operator_browser)
    assert response.status_code == 200
    trigger = json.loads(response["HX-Trigger"])
    assert trigger["console-message"] == {
        "level": "success",
        "text": "Quarantine of case-service created; applying.",
    }
    quarantine = Quarantine.objects.get()
    lifted = json.loads(lift(operator_browser, quarantine)["HX-Trigger"])
    assert lifted["console-message"]["text"] == ("Quarantine of case-service lifted.")


def test_quarantining_without_javascript_confirms_after_the_redirect(operator_browser, estate):
    response = create(operator_browser, htmx=False)
    page = operator_browser.get(response["Location"]).content.decode()
    assert "Quarantine of case-service created" in page
    response = lift(operator_browser, Quarantine.objects.get(), htmx=False)
    page = operator_browser.get(response["Location"]).content.decode()
    assert "of case-service lifted." in page


def test_affected_counts_link_to_what_they_count(auditor_browser, make_snapshot, operator):
    make_snapshot(claimed="collect")
    quarantine = quarantine_apply(
        quarantine_id=quarantine_create(
            scope="source", target=CASE, reason="corrupt exports", actor=operator.user
        ).quarantine_id
    )
    assert quarantine.affected["snapshots"] == 1
    page = auditor_browser.get("/quarantine/").content.decode()
    link = re.search(
        r'<a class="pair affected" data-count="snapshots" href="([^"]+)"><strong>1</strong>',
        row_of(page, "target-source-case-service"),
    )
    assert link, "the count of snapshots is a link"
    listed = auditor_browser.get(html.unescape(link.group(1))).content.decode()
    assert re.search(r'<span class="pager-count">\s*1\u20131 of 1\s*</span>', listed)


def test_a_refused_snapshot_links_the_quarantine_that_refused_it(
    auditor_browser, quarantined, make_snapshot
):
    snapshot = make_snapshot(claimed="collect")
    codes = [reason["code"] for reason in snapshot.content["decision"]["reasons"]]
    assert "source_quarantined" in codes
    page = auditor_browser.get(f"/snapshots/{snapshot.snapshot_id}/").content.decode()
    block = re.search(r'<dd id="snapshot-quarantines">(.*?)</dd>', page, re.S)
    assert block and quarantined.quarantine_id in block.group(1)
    assert "/quarantine/?scope=source&amp;target=case-service" in block.group(1)


def test_a_snapshot_decided_before_the_quarantine_names_none(
    auditor_browser, make_snapshot, operator
):
    snapshot = make_snapshot(claimed="collect")
    quarantine_create(scope="source", target=CASE, reason="later", actor=operator.user)
    page = auditor_browser.get(f"/snapshots/{snapshot.snapshot_id}/").content.decode()
    assert 'id="snapshot-quarantines"' not in page


def test_the_history_status_filter_offers_any_once(auditor_browser, quarantined):
    page = auditor_browser.get("/quarantine/").content.decode()
    select = re.search(r'<select name="status".*?</select>', page, re.S).group(0)
    assert len(re.findall(r">any<", select)) == 1


# --- Filters: refused values say so; text matches forgive case and partial ids -------------


def test_a_refused_filter_value_is_shown_on_its_field(auditor_browser, make_snapshot):
    make_snapshot(claimed="collect")
    page = auditor_browser.get("/snapshots/?result=bogus").content.decode()
    field = re.search(r'<div class="filter has-error">.*?</div>', page, re.S)
    assert field and 'aria-invalid="true"' in field.group(0)
    assert "bogus is not one of the available choices" in field.group(0)
    assert 'role="alert"' in page


def test_text_filters_match_any_case_and_part_of_a_value(auditor_browser, make_snapshot):
    snapshot = make_snapshot(subject="Account-Mixed", claimed="collect")
    for query in (
        "subject=account-mixed",
        "subject=MIXED",
        f"decision_class={snapshot.decision_class[:5].upper()}",
    ):
        page = auditor_browser.get(f"/snapshots/?{query}").content.decode()
        assert f"/snapshots/{snapshot.snapshot_id}/" in page, query
    page = auditor_browser.get("/snapshots/?subject=nobody").content.decode()
    assert f"/snapshots/{snapshot.snapshot_id}/" not in page


def test_the_api_keeps_its_exact_subject_filter(auditor, make_snapshot):
    make_snapshot(subject="Account-Mixed", claimed="collect")
    assert auditor.get("/api/v1/snapshots", subject="account-mixed").json()["results"] == []
    assert len(auditor.get("/api/v1/snapshots", subject="Account-Mixed").json()["results"]) == 1


# --- A refused form comes back at its page's URL, so a reload never posts again ------------


def test_a_refused_plain_post_returns_to_its_page_with_the_error_and_draft(
    reviewer_browser, registry, agent
):
    ambiguous_fact(agent, agent, "baseline.eval-1")
    escalation = Escalation.objects.get()
    page = f"/escalations/{escalation.escalation_id}/"
    response = reviewer_browser.post(
        f"{page}approve/",
        {"rationale": "", "selected_ref": "draft-ref"},
        HTTP_REFERER=f"http://testserver{page}",
    )
    assert response.status_code == 303 and response["Location"] == page
    shown = reviewer_browser.get(page)
    assert shown["X-Console-Refused-Form"] == "kept"
    assert shown.status_code == 400
    body = shown.content.decode()
    assert 'role="alert"' in body or "form-error" in body
    assert escalation.escalation_id in body
    # Reloading reads the page afresh: no error, nothing posted again.
    again = reviewer_browser.get(page)
    assert again.status_code == 200 and "X-Console-Refused-Form" not in again
    escalation.refresh_from_db()
    assert escalation.status == "open"


def test_a_post_from_another_site_or_without_a_referer_is_answered_in_place(
    reviewer_browser, registry, agent
):
    ambiguous_fact(agent, agent, "baseline.eval-1")
    escalation = Escalation.objects.get()
    url = f"/escalations/{escalation.escalation_id}/approve/"
    assert reviewer_browser.post(url, {"rationale": ""}).status_code == 400
    elsewhere = reviewer_browser.post(
        url, {"rationale": ""}, HTTP_REFERER="https://elsewhere.example/escalations/"
    )
    assert elsewhere.status_code == 400
    # This host's URL whose path names another host: `Location: //elsewhere.example/` would
    # send the browser there (a scheme-relative URL).
    for path in ("//elsewhere.example/escalations/", "/\\elsewhere.example/escalations/"):
        off_host = reviewer_browser.post(
            url, {"rationale": ""}, HTTP_REFERER=f"http://testserver{path}"
        )
        assert off_host.status_code == 400, off_host.get("Location")


def test_htmx_posts_never_push_their_action_url(operator_browser):
    # Every hx-post in the console's templates says hx-push-url="false" or sits outside any
    # region that pushes: checked on the templates themselves.
    from pathlib import Path

    for template in Path("templates").rglob("*.html"):
        for form in re.findall(r"<form\b[^>]*hx-post=[^>]*>", template.read_text(), re.S):
            assert 'hx-push-url="false"' in form or "replay" in form, (template, form)


def test_every_time_filter_says_which_zone_it_reads(auditor_browser, estate):
    """README: every date-time input says which zone it reads (naive times are UTC)."""
    for page, names in (
        ("/effects/", ("created_after", "created_before")),
        ("/contradictions/", ("detected_after", "detected_before")),
        ("/audit/", ("since", "until")),
    ):
        body = auditor_browser.get(page).content.decode()
        for name in names:
            label = re.search(rf'<label for="id_{name}">([^<]*)</label>', body)
            assert label is not None and label.group(1).endswith(" (UTC)"), (page, name)
            assert "(UTC) (UTC)" not in label.group(1)
