"""The protocol end to end through the sync client, against a live server.

allow → commit (a key made and kept) → the same key again (the original receipt, replayed)
→ wait → verified; an answer lost in transit is retried with that key only; an owner that
does not answer leaves the effect `unknown`, which is never sent again.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from reconcile_client import EscalationPending, NoCurrentRecord, ReconcileClient

from reconcile_app.models import Effect, EvidenceEntry
from reconcile_app.services.corrections import correction_create
from sandbox_app.services import sandbox_authority_write, sandbox_fault_add
from tests.clients.conftest import RELEASE, SOURCE, Served
from tests.conftest import Persona


def test_allow_commit_retry_with_the_same_key_then_verified(
    served: Served, rc: ReconcileClient
) -> None:
    snapshot = served.reconcile(rc)
    assert snapshot.decision.result == "allow"
    assert snapshot.fields["collections_status"].version == 42
    assert snapshot.authorises(RELEASE)
    assert snapshot.actions[RELEASE].if_match == '"42"'
    assert isinstance(snapshot.ledger_seq, int) and snapshot.ledger_seq > 0
    assert set(snapshot.cutoffs) == {"valid_time", "recorded_time"}

    effect = rc.commit(snapshot, action=RELEASE, resulting_value="released")
    assert effect.status == "accepted" and not effect.replayed
    uuid.UUID(effect.idempotency_key.removeprefix("rc-"))  # made by the client, kept on it
    assert effect.expected_version == 42
    assert effect.receipt is not None and effect.receipt.resulting_version == 43

    again = rc.commit(
        snapshot,
        action=RELEASE,
        resulting_value="released",
        idempotency_key=effect.idempotency_key,
    )
    assert again.replayed
    assert again.receipt == effect.receipt

    settled = rc.wait(again, timeout=5)
    assert settled.status == "verified"
    found = settled.readback()
    assert found is not None and (found["value"], found["version"]) == ("released", 43)
    assert (settled.principal, settled.source) == (served.agent.name, SOURCE)
    assert settled.readback_attempts >= 1 and settled.sent_at is not None
    assert served.executions(effect.idempotency_key) == 1
    # The decision cites the evidence it rested on, each entry with its hash in the chain.
    assert [entry.evidence_id for entry in snapshot.evidence_manifest] == list(
        EvidenceEntry.objects.filter(
            subject=served.subject, field="collections_status", seq__lte=snapshot.ledger_seq
        ).values_list("evidence_id", flat=True)
    )
    assert all(len(entry.hash) == 64 for entry in snapshot.evidence_manifest)


def test_a_lost_answer_is_sent_again_with_the_same_key_only(
    served: Served, rc: ReconcileClient
) -> None:
    snapshot = served.reconcile(rc)
    sent: list[str] = []
    # The owner takes a second to answer; this client gives up on an answer after half that
    # (with attempts to spare, so a slow machine cannot run out of them).
    sandbox_fault_add(source=SOURCE, kind="latency", count=1, seconds=1)
    with served.counting_client(sent, timeout=0.5, commit_attempts=8) as impatient:
        effect = impatient.commit(
            snapshot, action=RELEASE, resulting_value="released", idempotency_key="lost-1"
        )
    # Answered from the record the first attempt made: one execution, one receipt.
    assert effect.idempotency_key == "lost-1"
    assert effect.replayed and effect.status in ("accepted", "verified")
    assert served.executions("lost-1") == 1
    commits = [line for line in sent if line == "POST /api/v1/effects"]
    assert len(commits) >= 2  # the lost one, then the same key until the record answered
    assert Effect.objects.count() == 1


@pytest.fixture
def resolution_held(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """No worker resolves unknown outcomes here: the queued resolution is only recorded."""
    from reconcile_app import tasks

    queued: list[int] = []
    monkeypatch.setattr(tasks.effect_resolve_task, "delay", queued.append)
    return queued


def test_an_unknown_outcome_is_waited_on_never_sent_again(
    served: Served, resolution_held: list[int]
) -> None:
    sent: list[str] = []
    with served.counting_client(sent) as rc:
        snapshot = served.reconcile(rc)
        # The owner commits, then its answer is lost: the server answers 202 `unknown`.
        sandbox_fault_add(source=SOURCE, kind="timeout_after_commit", count=1)
        effect = rc.commit(snapshot, action=RELEASE, resulting_value="released")
        assert effect.status == "unknown"
        settled = rc.wait(effect, timeout=1.0, interval=0.2)
    assert settled.status == "unknown"  # nobody resolved it: still unknown, not "failed"
    assert [line for line in sent if line == "POST /api/v1/effects"] == ["POST /api/v1/effects"]
    assert sent.count(f"GET /api/v1/effects/{effect.idempotency_key}") >= 1  # it asked
    assert served.executions(effect.idempotency_key) == 1
    assert len(resolution_held) == 1  # the server queued its own resolution, by the key


def test_the_other_calls_an_agent_makes(served: Served, rc: ReconcileClient) -> None:
    me = rc.me()
    assert (me.name, me.kind) == (served.agent.name, "agent")
    assert ("collections-contact-release", "7.3") in {
        (item.decision_class, item.active_version) for item in me.decision_classes
    }

    entry, memory = served.complaint_remembered(
        rc, note="The customer said on the phone that a complaint is open."
    )
    assert [found.memory_id for found in rc.memories(subject=served.subject)] == [memory.memory_id]

    # The owner now says a complaint is open: the contract escalates, a reviewer decides.
    served.owner_writes("open", subject=served.subject, field="complaint_status")
    waiting = served.reconcile(rc, claims=[{"memory_id": memory.memory_id}])
    assert waiting.decision.result == "escalate" and waiting.actions == {}
    assert waiting.claims[0].memory_id == memory.memory_id
    assert waiting.escalation_id is not None
    escalation = rc.escalation(waiting.escalation_id)
    assert (escalation.status, escalation.snapshot_id) == ("open", waiting.snapshot_id)
    with pytest.raises(EscalationPending) as pending:
        rc.commit(waiting, action=RELEASE, resulting_value="released")
    assert pending.value.escalation_id == waiting.escalation_id

    # A fact by rule: the registry names owner and revision, the record in force answers.
    today = datetime.now(UTC).date()
    sandbox_authority_write(
        source="eval-registry",
        fact_key="baseline.client-eval",
        owner="eval-registry",
        source_revision="registry@r3",
    )
    rc.remember(
        memory_class="operational",
        subject="client-eval",
        purpose="nightly-eval-summary",
        fact_key="baseline.client-eval",
        value="ckpt-0003",
        owner="eval-registry",
        source_revision="registry@r3",
        valid_until=today + timedelta(days=1),
        derived_from=[entry.evidence_id],
    )
    fact = rc.current_fact("baseline.client-eval", on=today)
    assert (fact.code, fact.value, fact.on) == ("ok", "ckpt-0003", today)
    with pytest.raises(NoCurrentRecord):
        rc.current_fact("baseline.client-eval", on=today + timedelta(days=2))


def test_an_auditor_replays_a_decision_as_it_was_knowable_then(
    served: Served, rc: ReconcileClient, operator: Persona
) -> None:
    snapshot = served.reconcile(rc)
    assert snapshot.decision.result == "allow"
    recorded = rc.replay(snapshot.snapshot_id)
    assert (recorded.mode, recorded.exact, recorded.incomplete) == ("as_recorded", True, False)
    assert recorded.replayed_hash == recorded.original_hash == snapshot.content_hash
    assert recorded.differences == ()

    # The evidence the decision rested on is withdrawn later: the record of what was
    # knowable then does not move; the corrected replay shows what the correction changes.
    cited = EvidenceEntry.objects.get(subject=served.subject, field="collections_status")
    correction_create(
        evidence_id=cited.evidence_id,
        reason="entered against the wrong account",
        actor=operator.user,
    )
    assert rc.replay(snapshot.snapshot_id).exact
    corrected = rc.replay(snapshot.snapshot_id, mode="corrected")
    assert (corrected.mode, corrected.exact) == ("corrected", False)
    changed = {difference.path: difference for difference in corrected.differences}
    assert (changed["decision.result"].recorded, changed["decision.result"].replayed) == (
        "allow",
        "refuse",
    )
