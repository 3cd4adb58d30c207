"""A commit refused by an owner is `rejected` only when the refusal proves nothing ran.

412 (the version moved), 422 (the key reused) and the owner's own 503 `owner_unavailable`
say the command was not executed. A 409 (the idempotency-key draft's "this key is still in
flight"), a 429 (a limiter's "not now") and a proxy's 503 (also answered when its upstream
reset after executing) do not: live, a 503 page after the owner applied the write was
recorded "the owner refused it: nothing changed". Those are `unknown`, for the owner's
ledger to settle.
"""

from __future__ import annotations

import pytest

from tests.reconcile_app.sources.test_http_guards import COMMAND, adapter  # noqa: F401

PROXY_PAGE = b"<html><body><h1>503 Service Unavailable</h1></body></html>"


@pytest.mark.parametrize(
    ("status", "answer", "outcome", "code"),
    [
        (409, {"detail": "a request with this key is in progress"}, "unknown", "refusal_unproven"),
        (429, {"detail": "slow down"}, "unknown", "refusal_unproven"),
        (503, PROXY_PAGE, "unknown", "refusal_unproven"),
        (503, {"code": "maintenance"}, "unknown", "refusal_unproven"),
        (503, {"code": "owner_unavailable"}, "rejected", "owner_unavailable"),
        (400, {"detail": "no such action"}, "rejected", "owner_refused"),
        (404, {"detail": "no such subject"}, "rejected", "owner_refused"),
        # The owner's words reach the agent beside ours: marked as the owner's.
        (412, {"detail": "the version moved"}, "rejected", "version_changed"),
        (422, {"detail": "that key was used"}, "rejected", "idempotency_key_reused"),
    ],
    ids=["409", "429", "proxy-503", "503-another-code", "owners-503", "400", "404", "412", "422"],
)
def test_only_a_refusal_that_proves_nothing_ran_is_rejected(
    adapter,
    stub_owner,
    status,
    answer,
    outcome,
    code,
):
    stub_owner.post_status, stub_owner.post_body = status, answer

    result = adapter.apply(COMMAND)

    assert (result.outcome, result.code) == (outcome, code)
    assert str(status) in result.detail
