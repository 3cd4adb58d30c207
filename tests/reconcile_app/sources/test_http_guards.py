"""The `http` adapter refuses identifiers that would steer the owner URL, and checks receipts.

Identifiers are refused before any I/O (the stub owner receives nothing). A receipt is proof
of our command only when it names our idempotency key, subject and field: anything else is
an answer, not proof, so an apply is `unknown` (the owner's ledger decides) and a lookup is
`unavailable`.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from reconcile_app.choices import ReadStatus
from reconcile_app.models import Effect, Source
from reconcile_app.sources import ApplyOutcome, EffectCommand, LookupOutcome, adapter_for
from tests.factories import ACCOUNT, load_yaml
from tests.reconcile_app.sources.test_http import http_files, reconcile_through_http, record

FIELD = "collections_status"
COMMAND = EffectCommand(
    idempotency_key="key-1",
    subject=ACCOUNT,
    field=FIELD,
    action="retain_manual_review",
    resulting_value="manual_review",
    expected_version=9,
)

BAD_IDENTIFIERS = pytest.mark.parametrize(
    "bad",
    [".", "..", "a/b", "a\\b", "a b", "a\tb", "line\nbreak", "nul\x00", "del\x7f", "c1\x85", ""],
    ids=[
        "dot",
        "dot-dot",
        "slash",
        "backslash",
        "space",
        "tab",
        "newline",
        "nul",
        "del",
        "c1-control",
        "empty",
    ],
)


def receipt(**overrides: object) -> dict:
    body = {
        "receipt_id": "r-1",
        "idempotency_key": COMMAND.idempotency_key,
        "subject": COMMAND.subject,
        "field": COMMAND.field,
        "action": COMMAND.action,
        "resulting_value": COMMAND.resulting_value,
        "resulting_version": 10,
    }
    body.update(overrides)
    return body


@pytest.fixture
def adapter(db, tmp_path, stub_owner):
    load_yaml(tmp_path, http_files(stub_owner.url))
    return adapter_for(Source.objects.get(name="case-service-http"))


@pytest.fixture
def http_agent(db):
    from tests.conftest import make_agent

    return make_agent("http-agent", ["http-check:retain_manual_review"])


# --- Identifiers never reach the network -------------------------------------------------------


@BAD_IDENTIFIERS
@pytest.mark.parametrize("which", ["subject", "field"])
def test_a_read_with_an_unsafe_identifier_is_unavailable_and_unsent(
    adapter, stub_owner, bad, which
):
    stub_owner.body = record()
    names = {"subject": ACCOUNT, "field": FIELD, which: bad}

    result = adapter.read(names["subject"], names["field"])

    assert result.status == ReadStatus.UNAVAILABLE
    assert result.detail.startswith("invalid identifier")
    assert (result.value, result.version) == (None, None)
    assert stub_owner.requests == []


@BAD_IDENTIFIERS
def test_an_authority_question_with_an_unsafe_fact_key_is_unavailable_and_unsent(
    adapter, stub_owner, bad
):
    stub_owner.body = {"owner": "platform", "source_revision": "r1"}

    result = adapter.authority(bad)

    assert result.status == ReadStatus.UNAVAILABLE
    assert result.detail.startswith("invalid identifier")
    assert stub_owner.requests == []


@BAD_IDENTIFIERS
@pytest.mark.parametrize("which", ["idempotency_key", "subject", "field"])
def test_an_apply_with_an_unsafe_identifier_is_rejected_unsent(adapter, stub_owner, bad, which):
    stub_owner.post_body = receipt(**{which: bad})

    result = adapter.apply(replace(COMMAND, **{which: bad}))

    assert (result.outcome, result.code) == (ApplyOutcome.REJECTED, "invalid_identifier")
    assert which in result.detail
    assert stub_owner.requests == []


@BAD_IDENTIFIERS
def test_a_lookup_with_an_unsafe_key_is_unavailable_and_unsent(adapter, stub_owner, bad):
    stub_owner.body = receipt(idempotency_key=bad)

    result = adapter.lookup_effect(bad)

    assert result.outcome == LookupOutcome.UNAVAILABLE
    assert stub_owner.requests == []


def test_safe_identifiers_with_dots_and_percent_signs_are_sent_encoded(adapter, stub_owner):
    stub_owner.body = record()

    result = adapter.read("acc.17..x", "%2e%2e")

    assert result.status == ReadStatus.OK
    assert [r.path for r in stub_owner.requests] == ["/records/acc.17..x/%252e%252e"]


# --- Receipts must be the one asked for --------------------------------------------------------


def test_a_receipt_for_our_command_is_accepted(adapter, stub_owner):
    stub_owner.post_body = receipt()

    result = adapter.apply(COMMAND)

    assert result.outcome == ApplyOutcome.ACCEPTED
    assert result.receipt == receipt()
    assert stub_owner.requests[0].headers["Idempotency-Key"] == "key-1"


@pytest.mark.parametrize("key", ["idempotency_key", "subject", "field"])
@pytest.mark.parametrize("status", [200, 201])
def test_a_receipt_for_another_command_is_unknown_not_accepted(adapter, stub_owner, key, status):
    stub_owner.post_status, stub_owner.post_body = status, receipt(**{key: "someone-else"})

    result = adapter.apply(COMMAND)

    assert (result.outcome, result.code) == (ApplyOutcome.UNKNOWN, "receipt_mismatch")
    assert key in result.detail and "someone-else" in result.detail
    assert result.receipt is None


@pytest.mark.parametrize("key", ["idempotency_key", "subject", "field"])
def test_a_receipt_missing_a_key_is_unknown(adapter, stub_owner, key):
    body = receipt()
    del body[key]
    stub_owner.post_body = body

    result = adapter.apply(COMMAND)

    assert (result.outcome, result.code) == (ApplyOutcome.UNKNOWN, "receipt_mismatch")
    assert f"no {key}" in result.detail


def test_a_ledger_receipt_for_our_key_is_found(adapter, stub_owner):
    stub_owner.body = receipt()

    result = adapter.lookup_effect("key-1")

    assert result.outcome == LookupOutcome.FOUND
    assert result.receipt == receipt()


@pytest.mark.parametrize(
    "answer",
    [receipt(idempotency_key="key-2"), {"receipt_id": "r-1"}, ["key-1"]],
    ids=["another-key", "no-key", "not-an-object"],
)
def test_a_ledger_receipt_for_another_key_is_unavailable(adapter, stub_owner, answer):
    stub_owner.body = answer

    result = adapter.lookup_effect("key-1")

    assert result.outcome == LookupOutcome.UNAVAILABLE
    assert result.receipt is None
    assert result.detail.startswith(("receipt does not match", "malformed receipt"))


def test_a_commit_answered_with_another_commands_receipt_is_unknown(
    db, tmp_path, stub_owner, http_agent
):
    """Over HTTP: the owner's 201 names another key, so the effect waits for its ledger."""
    load_yaml(tmp_path, http_files(stub_owner.url))
    stub_owner.body = record()
    snapshot = reconcile_through_http(http_agent)
    stub_owner.post_body = receipt(idempotency_key="not-ours", subject=ACCOUNT, field=FIELD)

    response = http_agent.post(
        "/api/v1/effects",
        {
            "snapshot_id": snapshot["snapshot_id"],
            "action": "retain_manual_review",
            "resulting_value": "manual_review",
        },
        HTTP_IDEMPOTENCY_KEY="ours-1",
        HTTP_IF_MATCH='"9"',
    )

    assert response.status_code == 202, response.content
    assert response.json()["status"] == "unknown"
    effect = Effect.objects.get(idempotency_key="ours-1")
    assert effect.status == "unknown"
    assert "idempotency_key" in effect.outcome["detail"]
    assert "not-ours" in effect.outcome["detail"]
    assert effect.receipt in (None, {})


@pytest.mark.parametrize(
    ("answer", "found"),
    [
        ({"code": "effect_not_found", "detail": "no such key"}, LookupOutcome.NOT_FOUND),
        ({"detail": "Not Found"}, LookupOutcome.UNAVAILABLE),
        (b"<html><body>404 Not Found</body></html>", LookupOutcome.UNAVAILABLE),
        ({"code": "record_not_found"}, LookupOutcome.UNAVAILABLE),
    ],
    ids=["the-owners-code", "a-bare-404", "a-proxys-page", "another-code"],
)
def test_only_the_owners_own_404_says_its_ledger_never_saw_the_key(
    adapter, stub_owner, answer, found
):
    """A misrouted proxy's 404 would settle an effect not_executed while the owner's ledger
    holds it."""
    stub_owner.status, stub_owner.body = 404, answer

    result = adapter.lookup_effect("key-1")

    assert result.outcome == found
    if found == LookupOutcome.UNAVAILABLE:
        assert "effect_not_found" in result.detail


def test_a_row_whose_base_url_has_a_query_sends_nothing(adapter, stub_owner):
    # Loaded before source files were checked for one: /?v=2/effects is a POST to "/".
    adapter.source.base_url = stub_owner.url + "?v=2"
    stub_owner.body = receipt()

    applied = adapter.apply(COMMAND)

    assert (applied.outcome, applied.code) == (ApplyOutcome.REJECTED, "owner_unavailable")
    assert "query" in applied.detail and "nothing was sent" in applied.detail
    assert stub_owner.requests == []
