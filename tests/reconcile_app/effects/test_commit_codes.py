"""Every status code of POST /api/v1/effects (docs/api.md)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from reconcile_app.choices import EffectStatus
from reconcile_app.models import Effect
from sandbox_app.services import sandbox_fault_add, sandbox_record_write
from tests.conftest import make_agent
from tests.reconcile_app.effects.conftest import SUBJECT, commit, reconcile


@pytest.fixture
def allowed(collectible, agent):
    return reconcile(agent)


def test_missing_idempotency_key_is_400(allowed, agent):
    response = agent.post(
        "/api/v1/effects",
        {
            "snapshot_id": allowed["snapshot_id"],
            "action": "release_collections_hold",
            "resulting_value": "released",
        },
        HTTP_IF_MATCH='"42"',
    )
    assert (response.status_code, response.json()["code"]) == (400, "idempotency_key_missing")
    assert not Effect.objects.exists()


def test_missing_if_match_is_428(allowed, agent):
    response = agent.post(
        "/api/v1/effects",
        {
            "snapshot_id": allowed["snapshot_id"],
            "action": "release_collections_hold",
            "resulting_value": "released",
        },
        HTTP_IDEMPOTENCY_KEY="k-1",
    )
    assert (response.status_code, response.json()["code"]) == (428, "precondition_required")


def _commit_with(agent, snapshot, *, key: str = "k-h", if_match: str = '"42"'):
    return commit(agent, snapshot, "release_collections_hold", "released", key, if_match=if_match)


@pytest.mark.parametrize(
    "if_match",
    [
        '"4_2"',
        '" 42"',
        '"+42"',
        '"-42"',
        '"\u0664\u0662"',
        '"42',
        '"9223372036854775807"',
        '"9223372036854775808"',
        '"1' + "0" * 19 + '"',
        "*",
    ],
    ids=[
        "underscore",
        "space",
        "plus",
        "minus",
        "other-digits",
        "one-quote",
        "last-64-bit",
        "past-64-bits",
        "20-digits",
        "star",
    ],
)
def test_an_if_match_that_is_no_version_is_400(allowed, agent, if_match):
    """int() alone took "4_2" as 42 and " 42" as 42: only ASCII digits are a version."""
    response = _commit_with(agent, allowed, if_match=if_match)
    assert (response.status_code, response.json()["code"]) == (400, "invalid_if_match")
    assert not Effect.objects.exists()


@pytest.mark.parametrize("if_match", ['"42"', 'W/"42"', "42"])
def test_a_version_quoted_as_an_etag_or_bare_is_taken(allowed, agent, if_match):
    assert _commit_with(agent, allowed, if_match=if_match).status_code == 201


def test_a_snapshot_at_a_19_digit_version_commits_with_the_if_match_it_offers(collectible, agent):
    """An owner whose versions are nanosecond clocks (19 digits, within 64 bits) is read and
    offered as `"if_match"`; the commit refused that header as 400 invalid_if_match, so no
    agent could ever act on such an owner."""
    sandbox_record_write(
        source="case-service",
        subject=SUBJECT,
        field="collections_status",
        value="collect",
        version=1_733_500_000_000_000_000,
    )
    snapshot = reconcile(agent)
    offered = snapshot["actions"]["release_collections_hold"]["if_match"]
    assert offered == '"1733500000000000000"'
    response = _commit_with(agent, snapshot, if_match=offered)
    assert response.status_code == 201, response.content
    assert response.json()["resulting_version"] == 1_733_500_000_000_000_001


def test_a_non_ascii_idempotency_key_is_400(allowed, agent):
    """UTF-8 "café-1" reaches Django as Latin-1 "cafÃ©-1": stored so, it could not be found
    under its own name, and the http adapter cannot send it on to an owner."""
    utf8_read_as_latin1 = "café-1".encode().decode("latin-1")
    response = _commit_with(agent, allowed, key=utf8_read_as_latin1)
    assert (response.status_code, response.json()["code"]) == (400, "invalid_identifier")
    assert not Effect.objects.exists()


def test_if_match_other_than_the_version_read_is_412(allowed, agent):
    response = commit(agent, allowed, "release_collections_hold", "released", "k-2", version=41)
    assert (response.status_code, response.json()["code"]) == (412, "snapshot_version_mismatch")
    assert not Effect.objects.exists()


def test_deny_snapshot_cannot_authorise(collectible, agent):
    sandbox_record_write(
        source="case-service", subject=SUBJECT, field="collections_status", value="hold"
    )
    snapshot = reconcile(agent)
    assert snapshot["decision"]["result"] != "allow"
    response = commit(agent, snapshot, "release_collections_hold", "released", "k-3")
    assert (response.status_code, response.json()["code"]) == (403, "decision_not_allowed")


def test_action_not_permitted_by_the_snapshot_is_403(collectible):
    narrow = make_agent("narrow", ["collections-contact-release:release_collections_hold"])
    snapshot = reconcile(narrow)
    assert snapshot["decision"]["permitted_actions"] == ["release_collections_hold"]
    response = commit(narrow, snapshot, "retain_manual_review", "manual_review", "k-4")
    assert (response.status_code, response.json()["code"]) == (403, "decision_not_allowed")


def test_another_principals_snapshot_is_403(allowed):
    other = make_agent("other", ["collections-contact-release:release_collections_hold"])
    response = commit(other, allowed, "release_collections_hold", "released", "k-5")
    assert (response.status_code, response.json()["code"]) == (403, "decision_not_allowed")


def test_expired_snapshot_is_412(allowed, agent, monkeypatch):
    from django.utils import timezone

    later = timezone.now() + timedelta(seconds=121)
    monkeypatch.setattr(timezone, "now", lambda: later)
    response = commit(agent, allowed, "release_collections_hold", "released", "k-6")
    assert (response.status_code, response.json()["code"]) == (412, "snapshot_expired")


def test_same_key_other_request_is_422(
    allowed, agent, eager_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        assert (
            commit(agent, allowed, "release_collections_hold", "released", "k-7").status_code == 201
        )
    response = commit(agent, allowed, "release_collections_hold", "something-else", "k-7")
    assert (response.status_code, response.json()["code"]) == (422, "idempotency_key_reused")


def test_same_key_in_flight_is_409(allowed, agent):
    commit(agent, allowed, "release_collections_hold", "released", "k-8")
    Effect.objects.filter(idempotency_key="k-8").update(status=EffectStatus.SENT)
    response = commit(agent, allowed, "release_collections_hold", "released", "k-8")
    assert (response.status_code, response.json()["code"]) == (409, "idempotency_key_in_use")


def test_owner_unavailable_rejects_without_executing(allowed, agent):
    sandbox_fault_add(source="case-service", kind="unavailable", count=1)
    response = commit(agent, allowed, "release_collections_hold", "released", "k-9")
    assert (response.status_code, response.json()["code"]) == (503, "owner_unavailable")
    assert Effect.objects.get(idempotency_key="k-9").status == "rejected"


def test_unknown_outcome_not_executed_when_owner_never_saw_it(allowed, agent, monkeypatch):
    from reconcile_app.services.effects import effect_resolve_unknown
    from reconcile_app.sources import ApplyOutcome, ApplyResult
    from sandbox_app.adapter import SandboxAdapter

    # The request is lost on the way: the owner never sees it, the caller times out.
    monkeypatch.setattr(
        SandboxAdapter,
        "apply",
        lambda self, command: ApplyResult(outcome=ApplyOutcome.UNKNOWN, code="timeout"),
    )
    assert commit(agent, allowed, "release_collections_hold", "released", "k-10").status_code == 202
    effect = Effect.objects.get(idempotency_key="k-10")
    monkeypatch.undo()
    resolved = effect_resolve_unknown(effect_id=effect.pk)
    assert resolved.status == "not_executed"
    assert resolved.events.filter(kind="resolution").exists()


def test_unknown_stays_unknown_when_the_ledger_cannot_be_asked(allowed, agent):
    from reconcile_app.services.effects import effect_resolve_unknown

    sandbox_fault_add(source="case-service", kind="timeout_after_commit", count=1)
    assert commit(agent, allowed, "release_collections_hold", "released", "k-11").status_code == 202
    sandbox_fault_add(source="case-service", kind="unavailable")
    effect = effect_resolve_unknown(effect_id=Effect.objects.get(idempotency_key="k-11").pk)
    assert effect.status == "unknown"
    assert effect.resolution_attempts == 1
    assert effect.next_check_at is not None


def test_lost_postcondition_is_flagged(
    allowed, agent, eager_tasks, django_capture_on_commit_callbacks
):
    sandbox_fault_add(source="case-service", kind="drop_postcondition", count=1)
    with django_capture_on_commit_callbacks(execute=True):
        response = commit(agent, allowed, "release_collections_hold", "released", "k-12")
    assert response.status_code == 201
    assert Effect.objects.get(idempotency_key="k-12").status == "postcondition_failed"


def test_a_blank_if_match_or_idempotency_key_counts_as_missing(allowed, agent):
    """A header sent empty (or only spaces) is no version and no key: the same 428 / 400
    as leaving it out, not a malformed value."""
    blank_match = _commit_with(agent, allowed, if_match="   ")
    assert (blank_match.status_code, blank_match.json()["code"]) == (428, "precondition_required")
    blank_key = _commit_with(agent, allowed, key="   ")
    assert (blank_key.status_code, blank_key.json()["code"]) == (400, "idempotency_key_missing")
    assert not Effect.objects.exists()
