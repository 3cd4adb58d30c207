"""Seed 000, missing dedupe record: the owner executes a command and forgets its key.

The protocol must still apply the effect once: a retry with the same key is never re-sent
blindly (the owner's ledger is asked, then the target is read); a command that does reach the
owner again carries the If-Match it was sent with, which the first execution made stale.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from reconcile_app.models import Effect, EffectEvent
from reconcile_app.services.effects import effect_readback, effect_resolve_unknown
from reconcile_app.sources import ApplyOutcome, EffectCommand, LookupOutcome, adapter_for
from sandbox_app.models import SandboxEffect, SandboxRecord
from sandbox_app.services import sandbox_fault_add
from tests.reconcile_app.effects.conftest import SUBJECT, commit, reconcile


def owner_record() -> tuple[Any, int]:
    record = SandboxRecord.objects.get(
        source="case-service", subject=SUBJECT, field="collections_status"
    )
    return record.value, record.version


def test_the_fault_executes_the_command_and_forgets_the_key(collectible, agent):
    snapshot = reconcile(agent)
    sandbox_fault_add(source="case-service", kind="lose_dedupe_record", count=1)
    response = commit(agent, snapshot, "release_collections_hold", "released", "k-1")
    assert response.status_code == 201  # the receipt came back; the owner kept no record
    assert owner_record() == ("released", 43)
    assert not SandboxEffect.objects.filter(idempotency_key="k-1").exists()
    effect = Effect.objects.get(idempotency_key="k-1")
    source = adapter_for(effect.source)
    assert source.lookup_effect("k-1").outcome == LookupOutcome.NOT_FOUND
    # The agent's retry is answered from Reconcile's own record: nothing reaches the owner.
    again = commit(agent, snapshot, "release_collections_hold", "released", "k-1")
    assert (again.status_code, again["Idempotent-Replayed"]) == (200, "true")
    assert owner_record() == ("released", 43)


def test_a_lost_answer_and_a_lost_key_still_apply_once(collectible, agent):
    snapshot = reconcile(agent)
    sandbox_fault_add(source="case-service", kind="lose_dedupe_record", count=1)
    sandbox_fault_add(source="case-service", kind="timeout_after_commit", count=1)
    first = commit(agent, snapshot, "release_collections_hold", "released", "k-2")
    assert (first.status_code, first.json()["status"]) == (202, "unknown")
    assert owner_record() == ("released", 43)

    # The protocol's retry: same key, same body. It asks the owner's ledger (which forgot the
    # key) and reads the target (moved on): it cannot prove either way, so it stays unknown —
    # and it never re-sends.
    retry = commit(agent, snapshot, "release_collections_hold", "released", "k-2")
    assert (retry.status_code, retry.json()["status"]) == (202, "unknown")
    assert owner_record() == ("released", 43)
    effect = Effect.objects.get(idempotency_key="k-2")
    attempt = EffectEvent.objects.filter(effect=effect, kind="resolution_attempt").last()
    assert attempt is not None
    assert attempt.detail["unresolved"] == "ledger has no key but the target changed since"
    assert (attempt.detail["target_version"], attempt.detail["holds_this_value"]) == (43, True)
    assert effect_resolve_unknown(effect_id=effect.pk).status == "unknown"

    # Had the same command reached the owner again (a blind re-send), the owner — with no
    # record of the key — would treat it as new, and its stale If-Match stops it.
    resent = adapter_for(effect.source).apply(
        EffectCommand(
            idempotency_key="k-2",
            subject=SUBJECT,
            field="collections_status",
            action="release_collections_hold",
            resulting_value="released",
            expected_version=42,
        )
    )
    assert (resent.outcome, resent.code, resent.expected, resent.found) == (
        ApplyOutcome.REJECTED,
        "version_changed",
        42,
        43,
    )
    assert owner_record() == ("released", 43)  # applied exactly once


def test_an_operator_settles_it_and_the_readback_verifies(collectible, agent, operator):
    snapshot = reconcile(agent)
    sandbox_fault_add(source="case-service", kind="lose_dedupe_record", count=1)
    sandbox_fault_add(source="case-service", kind="timeout_after_commit", count=1)
    commit(agent, snapshot, "release_collections_hold", "released", "k-3")
    effect = Effect.objects.get(idempotency_key="k-3")
    effect_resolve_unknown(effect_id=effect.pk)
    resolved = operator.post(
        "/api/v1/effects/k-3/resolve",
        {"outcome": "succeeded", "reason": "the owner's record shows released at 43"},
    )
    assert resolved.json()["status"] == "accepted"
    assert effect_readback(effect_id=effect.pk).status == "verified"
    assert owner_record() == ("released", 43)


@pytest.mark.parametrize(
    ("vouched", "said"),
    [("before the command", "view older than the command"), ("no time", "no observed_at")],
)
def test_a_view_that_may_predate_the_command_never_proves_it_did_not_execute(
    collectible, agent, monkeypatch, vouched, said
):
    """The owner executed and forgot the key; a lagging replica still shows the version the
    command was sent against. A view from before the command, or one that vouches for no
    time (missing, or not a timestamp with a zone: `owner_time` reads it as None; a read is
    judged stale without one), proves nothing: the effect stays unknown (it was resolved
    not_executed, a lost effect the agent would then redo)."""
    snapshot = reconcile(agent)
    sandbox_fault_add(source="case-service", kind="lose_dedupe_record", count=1)
    sandbox_fault_add(source="case-service", kind="timeout_after_commit", count=1)
    commit(agent, snapshot, "release_collections_hold", "released", "k-4")
    effect = Effect.objects.get(idempotency_key="k-4")
    assert owner_record() == ("released", 43)  # it did execute
    adapter = type(adapter_for(effect.source))
    fresh_read = adapter.read
    taken = None if vouched == "no time" else effect.outcome_at - timedelta(seconds=5)

    def replica_behind(self, subject, field):
        read = fresh_read(self, subject, field)
        return replace(read, value="collect", version=42, observed_at=taken)

    monkeypatch.setattr(adapter, "read", replica_behind)
    assert effect_resolve_unknown(effect_id=effect.pk).status == "unknown"
    attempt = EffectEvent.objects.filter(effect=effect, kind="resolution_attempt").last()
    assert said in attempt.detail["unresolved"]

    monkeypatch.setattr(adapter, "read", fresh_read)  # caught up: the target moved on
    assert effect_resolve_unknown(effect_id=effect.pk).status == "unknown"
