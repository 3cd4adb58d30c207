"""A receipt is proof only with the version the write produced: an integer past If-Match.

An owner (or a proxy answering for it) that sends a 201 whose `resulting_version` is no
version — a string, a number past 64 bits, an object, none at all, or one not past the
version the command was sent against — has answered, but proved nothing: the commit is
`unknown` (never a 500 that leaves the effect `sent`), and the owner's ledger answering the
same receipt, or one for another target, does not settle it either.
"""

from __future__ import annotations

import pytest

from reconcile_app.models import Effect, Source
from reconcile_app.services.effects import effect_resolve_unknown
from reconcile_app.sources import ApplyOutcome, adapter_for
from tests.factories import ACCOUNT, load_yaml
from tests.reconcile_app.sources.test_http import http_files, reconcile_through_http, record
from tests.reconcile_app.sources.test_http_guards import COMMAND, FIELD, receipt

NOT_A_VERSION = pytest.mark.parametrize(
    "version",
    ["abc", "10", 2**70, {"v": 10}, None, True, 10.5, 9, 3],
    ids=[
        "text",
        "digits-as-text",
        "past-64-bits",
        "object",
        "null",
        "bool",
        "fraction",
        "the-version-sent-against",
        "backwards",
    ],
)


@pytest.fixture(autouse=True)
def _http_estate(db, tmp_path, stub_owner):
    load_yaml(tmp_path, http_files(stub_owner.url))


@pytest.fixture
def http_agent(db):
    from tests.conftest import make_agent

    return make_agent("http-agent", ["http-check:retain_manual_review"])


@NOT_A_VERSION
def test_a_receipt_without_a_version_past_if_match_is_unknown(stub_owner, version):
    stub_owner.post_body = receipt(resulting_version=version)

    result = adapter_for(Source.objects.get(name="case-service-http")).apply(COMMAND)

    assert (result.outcome, result.code) == (ApplyOutcome.UNKNOWN, "receipt_mismatch")
    assert "resulting_version" in result.detail
    assert result.receipt is None


def test_a_receipt_without_resulting_version_is_unknown(stub_owner):
    body = receipt()
    del body["resulting_version"]
    stub_owner.post_body = body

    result = adapter_for(Source.objects.get(name="case-service-http")).apply(COMMAND)

    assert (result.outcome, result.code) == (ApplyOutcome.UNKNOWN, "receipt_mismatch")


def test_a_receipt_one_version_on_is_accepted(stub_owner):
    stub_owner.post_body = receipt(resulting_version=COMMAND.expected_version + 1)

    result = adapter_for(Source.objects.get(name="case-service-http")).apply(COMMAND)

    assert result.outcome == ApplyOutcome.ACCEPTED
    assert result.receipt == receipt(resulting_version=10)


def _commit(http_agent, snapshot, key):
    return http_agent.post(
        "/api/v1/effects",
        {
            "snapshot_id": snapshot["snapshot_id"],
            "action": "retain_manual_review",
            "resulting_value": "manual_review",
        },
        HTTP_IDEMPOTENCY_KEY=key,
        HTTP_IF_MATCH='"9"',
    )


@pytest.mark.parametrize("version", ["abc", 2**70, {"v": 10}], ids=["text", "huge", "object"])
def test_a_commit_answered_with_no_version_is_unknown_and_stays_so(stub_owner, http_agent, version):
    """Before: the receipt went into the effect's integer column: a 500, the effect `sent`;
    and its resolution, asking the ledger for the same receipt, crashed on every attempt."""
    stub_owner.body = record()
    snapshot = reconcile_through_http(http_agent)
    bad = receipt(idempotency_key="ours-1", subject=ACCOUNT, field=FIELD, resulting_version=version)
    stub_owner.post_body = bad

    response = _commit(http_agent, snapshot, "ours-1")

    assert response.status_code == 202, response.content
    assert response.json()["status"] == "unknown"
    effect = Effect.objects.get(idempotency_key="ours-1")
    assert (effect.status, effect.outcome["code"]) == ("unknown", "receipt_mismatch")
    stub_owner.body = bad  # the owner's ledger answers the same receipt

    effect = effect_resolve_unknown(effect_id=effect.pk)

    assert effect.status == "unknown"
    assert effect.resulting_version is None
    assert "resulting_version" in effect.last_check_error


def test_a_ledger_receipt_for_another_target_does_not_settle_an_unknown(stub_owner, http_agent):
    """Before: the ledger's receipt was taken on its key alone, whatever target it named."""
    stub_owner.body = record()
    snapshot = reconcile_through_http(http_agent)
    stub_owner.post_status, stub_owner.post_body = 504, {}
    assert _commit(http_agent, snapshot, "ours-2").json()["status"] == "unknown"
    effect = Effect.objects.get(idempotency_key="ours-2")
    stub_owner.body = receipt(idempotency_key="ours-2", subject="account-99", field=FIELD)

    effect = effect_resolve_unknown(effect_id=effect.pk)

    assert effect.status == "unknown"
    assert "subject" in effect.last_check_error and "account-99" in effect.last_check_error
    assert effect.receipt in (None, {})


def test_a_ledger_receipt_for_this_command_settles_it(stub_owner, http_agent):
    stub_owner.body = record()
    snapshot = reconcile_through_http(http_agent)
    stub_owner.post_status, stub_owner.post_body = 504, {}
    assert _commit(http_agent, snapshot, "ours-3").json()["status"] == "unknown"
    effect = Effect.objects.get(idempotency_key="ours-3")
    stub_owner.body = receipt(idempotency_key="ours-3", subject=ACCOUNT, field=FIELD)

    effect = effect_resolve_unknown(effect_id=effect.pk)

    assert (effect.status, effect.resulting_version) == ("accepted", 10)


# --- A refusal's body is the owner's to shape ---------------------------------------------------


@pytest.mark.parametrize("body", [[1], "nope", 7, None], ids=["list", "string", "number", "null"])
@pytest.mark.parametrize(
    ("status", "code"),
    [(412, "version_changed"), (422, "idempotency_key_reused"), (400, "owner_refused")],
)
def test_a_refusal_whose_body_is_not_an_object_is_still_a_refusal(stub_owner, body, status, code):
    """Before: `answer.get` on a list or a string raised, and the commit answered 500."""
    stub_owner.post_status, stub_owner.post_body = status, body

    result = adapter_for(Source.objects.get(name="case-service-http")).apply(COMMAND)

    assert (result.outcome, result.code) == (ApplyOutcome.REJECTED, code)
    if status == 412:
        assert (result.expected, result.found) == (COMMAND.expected_version, None)


def test_a_412_naming_no_versions_records_none(stub_owner):
    stub_owner.post_status = 412
    stub_owner.post_body = {"expected": "abc", "found": {"x": 1}, "detail": ["x" * 2000]}

    result = adapter_for(Source.objects.get(name="case-service-http")).apply(COMMAND)

    assert (result.expected, result.found) == (COMMAND.expected_version, None)
    assert len(result.detail) <= 500


@pytest.mark.parametrize("status", [202, 204])
def test_a_success_without_a_receipt_is_unknown_not_rejected(stub_owner, status):
    """Before: a 202 (queued) or 204 was `rejected` (`owner_refused`) though it may execute."""
    stub_owner.post_status = status
    stub_owner.post_body = receipt() if status == 202 else b""

    result = adapter_for(Source.objects.get(name="case-service-http")).apply(COMMAND)

    assert (result.outcome, result.code) == (ApplyOutcome.UNKNOWN, "receipt_mismatch")


def test_a_commit_refused_with_a_list_body_answers_the_refusal(stub_owner, http_agent):
    stub_owner.body = record()
    snapshot = reconcile_through_http(http_agent)
    stub_owner.post_status, stub_owner.post_body = 412, [1]

    response = _commit(http_agent, snapshot, "ours-4")

    assert response.status_code == 412, response.content
    assert response.json()["code"] == "version_changed"
    assert Effect.objects.get(idempotency_key="ours-4").status == "rejected"
