"""The console's habits on the server side: the "go to" box, a person's own API tokens, and
the audit timelines on evidence, correction and fact pages."""

from __future__ import annotations

import re

import pytest
from django.contrib.sessions.models import Session
from django.test import Client

from reconcile_app.console.views.habits import NEW_TOKEN_COOKIE
from reconcile_app.models import ApiKey, AuditEvent, DecisionSnapshot
from reconcile_app.selectors.goto import SHORTEST_SNAPSHOT_PREFIX
from tests.conftest import make_person
from tests.reconcile_app.console.conftest import signed_in
from tests.reconcile_app.lineage_chain import (  # noqa: F401 (fixtures)
    FACT_KEY,
    chain,
    collectible,
    correction,
)

# session, user, the user's groups, then one lookup per kind until one matches.
GOTO_SNAPSHOT_QUERIES = 4
GOTO_MISSING_QUERIES = 9


@pytest.mark.parametrize(
    ("attribute", "page"),
    [
        ("snapshot_id", "/snapshots/{}/"),
        ("effect_key", "/effects/{}/"),
        ("memory_id", "/memories/{}/"),
    ],
)
def test_goto_opens_the_page_an_id_names(chain, auditor_browser, attribute, page):
    value = getattr(chain, attribute)
    response = auditor_browser.get("/go/", {"q": f"  {value} "})
    assert response.status_code == 302
    assert response["Location"] == page.format(value)


def test_goto_opens_evidence_escalations_and_corrections(
    chain, correction, escalation, auditor_browser
):
    assert auditor_browser.get("/go/", {"q": "ev-collect"})["Location"] == "/evidence/ev-collect/"
    escalation_id = escalation.escalation_id
    assert (
        auditor_browser.get("/go/", {"q": escalation_id})["Location"]
        == f"/escalations/{escalation_id}/"
    )
    assert (
        auditor_browser.get("/go/", {"q": correction.correction_id})["Location"]
        == f"/corrections/{correction.correction_id}/"
    )


def test_goto_opens_a_snapshot_id_copied_shortened_from_a_list(chain, auditor_browser):
    """The lists show `snap_0123456789ab…` (the whole id in a tooltip): pasted as shown, it
    opens the one snapshot it begins."""
    listed = auditor_browser.get("/snapshots/").content.decode()
    shown = re.search(rf'title="{chain.snapshot_id}">([^<]+)</a>', listed)
    assert shown is not None and shown.group(1).endswith("…")
    response = auditor_browser.get("/go/", {"q": shown.group(1)})
    assert response.status_code == 302
    assert response["Location"] == f"/snapshots/{chain.snapshot_id}/"
    # Too short to name one snapshot: never a guess.
    assert auditor_browser.get("/go/", {"q": "snap_…"}).status_code == 404


def test_goto_never_guesses_between_two_snapshots_the_shortened_id_begins(chain, auditor_browser):
    """Two snapshot ids sharing the 12 hex digits a list shows: the shortened id names
    neither (a 404, not the first by the index); a longer prefix only one begins opens it."""
    shown = chain.snapshot_id[:SHORTEST_SNAPSHOT_PREFIX]
    twin = DecisionSnapshot.objects.get(snapshot_id=chain.snapshot_id)
    twin.pk = None
    twin._state.adding = True
    # A forged id (a digest never gives two alike this far): it differs after the prefix.
    twin.snapshot_id = shown + ("0" if chain.snapshot_id[-1] != "0" else "1") * (
        len(chain.snapshot_id) - len(shown)
    )
    twin.content_hash = "0" * len(twin.content_hash)
    twin.save(force_insert=True)
    assert auditor_browser.get("/go/", {"q": f"{shown}…"}).status_code == 404
    longer = chain.snapshot_id[: len(shown) + 20]
    if not twin.snapshot_id.startswith(longer):
        response = auditor_browser.get("/go/", {"q": f"{longer}…"})
        assert response["Location"] == f"/snapshots/{chain.snapshot_id}/"


def test_goto_with_no_match_is_a_404_that_says_what_was_tried(
    chain, auditor_browser, django_assert_num_queries
):
    with django_assert_num_queries(GOTO_MISSING_QUERIES):
        response = auditor_browser.get("/go/", {"q": "snap_nothing"})
    assert response.status_code == 404
    page = response.content.decode()
    assert 'id="goto-missing"' in page
    assert "snap_nothing" in page
    assert "snapshot, effect key, evidence, memory, escalation, correction" in page


def test_goto_query_count_is_fixed(chain, auditor_browser, django_assert_num_queries):
    with django_assert_num_queries(GOTO_SNAPSHOT_QUERIES):
        response = auditor_browser.get("/go/", {"q": chain.snapshot_id})
    assert response.status_code == 302


def test_goto_refuses_an_agent(chain, agent):
    browser = Client()
    browser.force_login(agent.user)
    response = browser.get("/go/", {"q": chain.snapshot_id})
    assert response.status_code == 403


def test_tokens_page_lists_only_your_own_tokens(operator, auditor, operator_browser):
    page = operator_browser.get("/tokens/").content.decode()
    own = ApiKey.objects.get(principal=operator.principal)
    theirs = ApiKey.objects.get(principal=auditor.principal)
    assert f'data-prefix="{own.prefix}"' in page
    assert theirs.prefix not in page
    assert "never" in page  # not used yet


def shown_token(page: str) -> str:
    return page.split('id="new-token-value" class="mono token-value" value="')[1].split('"')[0]


def test_a_new_token_is_shown_once_audited_and_opens_the_api(operator, operator_browser):
    response = operator_browser.post("/tokens/", follow=True)
    assert response.redirect_chain == [("/tokens/", 303)]
    page = response.content.decode()
    token = shown_token(page)
    assert token.startswith("rk_")
    prefix = token.split("_")[1]
    event = AuditEvent.objects.get(action="token.create")
    assert (event.actor, event.object_ref, event.after) == (
        operator.user,
        operator.principal.name,
        {"prefix": prefix},
    )
    assert token not in str(event.after)
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    assert api.get("/api/v1/me").status_code == 200
    # Shown once: the page lists the prefix, never the token again; its use is noted.
    again = operator_browser.get("/tokens/").content.decode()
    assert token not in again
    row = again.split(f'data-prefix="{prefix}"')[1].split("</tr>")[0]
    assert "<time" in row.split("</td>")[2]  # "last used" holds a time


def test_reloading_the_page_after_a_create_issues_no_second_token(operator, operator_browser):
    """Without htmx the create answers 303: the address bar holds /tokens/, not the POST."""
    before = ApiKey.objects.filter(principal=operator.principal).count()
    response = operator_browser.post("/tokens/")
    assert (response.status_code, response["Location"]) == (303, "/tokens/")
    assert "rk_" not in response.content.decode()
    shown = operator_browser.get("/tokens/")
    token = shown_token(shown.content.decode())
    assert "no-store" in shown["Cache-Control"]
    assert f"Token {token.split('_')[1]} created." in shown.content.decode()
    reload = operator_browser.get("/tokens/")
    assert token not in reload.content.decode()
    assert 'id="new-token-value"' not in reload.content.decode()
    assert ApiKey.objects.filter(principal=operator.principal).count() == before + 1
    assert AuditEvent.objects.filter(action="token.create").count() == 1


def test_a_new_token_never_rests_in_the_servers_session_store(operator, operator_browser):
    """Between the create and its one showing the token waits in a signed cookie of the
    person's own browser: a session row once held it until the session expired."""
    response = operator_browser.post("/tokens/")  # the redirect is not followed
    cookie = response.cookies[NEW_TOKEN_COOKIE]
    assert cookie["httponly"] and cookie["samesite"] == "Strict"
    assert (cookie["path"], cookie["max-age"]) == ("/tokens/", 60)
    token = operator_browser.get("/tokens/").content.decode()
    token = shown_token(token)
    for session in Session.objects.all():
        assert token not in str(session.get_decoded())
        assert token.split("_", 2)[2] not in session.session_data  # the secret, whole
    # Shown, the cookie is deleted; a cookie planted by another person is not shown.
    assert operator_browser.cookies[NEW_TOKEN_COOKIE].value == ""
    other = make_person("oona-operator", "operator")
    stranger = signed_in(other)
    stranger.cookies[NEW_TOKEN_COOKIE] = cookie.value
    assert 'id="new-token-value"' not in stranger.get("/tokens/").content.decode()


def test_htmx_swaps_the_new_token_in_a_response_no_cache_keeps(operator, operator_browser):
    response = operator_browser.post("/tokens/", HTTP_HX_REQUEST="true")
    assert response.status_code == 201
    token = shown_token(response.content.decode())
    assert "no-store" in response["Cache-Control"]
    # Shown in the swapped region only: the next read of the page does not hold it.
    assert token not in operator_browser.get("/tokens/").content.decode()


def test_revoking_a_token_closes_the_api_to_it(operator, operator_browser):
    prefix = ApiKey.objects.get(principal=operator.principal).prefix
    assert operator.client.get("/api/v1/me").status_code == 200
    response = operator_browser.post(f"/tokens/{prefix}/revoke/", {"reason": "laptop lost"})
    assert response.status_code == 302
    assert operator.client.get("/api/v1/me").status_code == 401
    event = AuditEvent.objects.get(action="token.revoke")
    assert (event.reason, event.after) == ("laptop lost", {"prefix": prefix, "revoked": True})
    again = operator_browser.post(f"/tokens/{prefix}/revoke/")
    assert again.status_code == 409
    assert "token_revoked" in again.content.decode()


def test_a_reason_too_long_is_refused_whole_and_the_token_stays(operator, operator_browser):
    prefix = ApiKey.objects.get(principal=operator.principal).prefix
    response = operator_browser.post(f"/tokens/{prefix}/revoke/", {"reason": "x" * 4001})
    assert response.status_code == 400
    assert "reason_too_long" in response.content.decode()
    assert ApiKey.objects.get(prefix=prefix).revoked_at is None
    assert not AuditEvent.objects.filter(action="token.revoke").exists()


def test_nobody_revokes_someone_elses_token(operator_browser, auditor):
    prefix = ApiKey.objects.get(principal=auditor.principal).prefix
    response = operator_browser.post(f"/tokens/{prefix}/revoke/")
    assert response.status_code == 404
    assert ApiKey.objects.get(prefix=prefix).revoked_at is None
    assert auditor.client.get("/api/v1/me").status_code == 200


def test_token_forms_need_the_csrf_token(operator):
    browser = signed_in(operator, enforce_csrf_checks=True)
    assert browser.post("/tokens/").status_code == 403
    assert not AuditEvent.objects.filter(action="token.create").exists()


def test_evidence_and_correction_pages_show_their_audit_timeline(
    chain, correction, auditor_browser
):
    evidence = auditor_browser.get("/evidence/ev-collect/").content.decode()
    assert 'id="audit-timeline-evidence-ev-collect"' in evidence
    assert 'data-action="correction.create"' in evidence
    report = auditor_browser.get(f"/corrections/{correction.correction_id}/").content.decode()
    assert 'data-action="correction.create"' in report


def test_fact_page_timeline_holds_its_memories_actions(chain, operator, auditor_browser):
    from reconcile_app.services.audit import audit_record

    audit_record(
        actor=operator.user,
        action="memory.status",
        object_kind="memory",
        object_ref=chain.fact_memory_id,
        reason="owner retired it",
    )
    audit_record(
        actor=operator.user, action="memory.status", object_kind="memory", object_ref="mem_other"
    )
    page = auditor_browser.get(f"/facts/{FACT_KEY}/").content.decode()
    timeline = page.split('class="panel audit-timeline"')[1]
    assert "owner retired it" in timeline
    assert chain.fact_memory_id in timeline
    assert "mem_other" not in timeline
