"""The objects the authorization matrix asks about: for the capable agent ("own") and for a
rival agent with the same capabilities ("other"), each an allowing snapshot, an escalated
one, an effect, attested evidence, a memory and an escalation; plus a contradiction, a
correction and a quarantine. See tests/test_authorization_matrix.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from django.utils import timezone

from config.heartbeat import worker_heartbeat_record
from reconcile_app.models import Contradiction
from reconcile_app.services.bulk_jobs import bulk_job_create
from reconcile_app.services.corrections import correction_create
from reconcile_app.services.evidence import evidence_append, evidence_attest
from reconcile_app.services.memory import memory_admit
from reconcile_app.services.quarantine import quarantine_apply, quarantine_create
from sandbox_app.services import sandbox_authority_write, sandbox_record_write
from tests.conftest import COLLECTIONS, make_agent


def _ago(**kwargs: float) -> Any:
    return timezone.now() - timedelta(**kwargs)


def _side(owner: Any, tag: str) -> SimpleNamespace:
    """One principal's objects: an allowing snapshot, an escalated one, an effect, evidence
    it attested, a memory and the escalation bound to its snapshot."""
    from reconcile_app.services.effects import effect_commit
    from reconcile_app.services.reconcile import ReconcileRequest, snapshot_issue

    subject, contested, named = f"acct-{tag}", f"acct-{tag}-esc", f"acct-{tag}-named"
    for name, state in ((subject, "collect"), (contested, "collect"), (named, "collect")):
        sandbox_record_write(
            source="case-service",
            subject=name,
            field="collections_status",
            value=state,
            version=7,
            valid_from=_ago(hours=1),
        )
        sandbox_record_write(
            source="complaints-service",
            subject=name,
            field="complaint_status",
            value="none",
            valid_from=_ago(days=1),
        )
        evidence_append(
            kind="observation",
            subject=name,
            field="collections_status",
            value=state,
            source="case-ledger",
            observed_at=_ago(hours=1),
        )
    # A later observation that disagrees with the owner: a contradiction, hence an escalation.
    evidence_append(
        kind="observation",
        subject=contested,
        field="collections_status",
        value="hold",
        source="contact-centre",
        observed_at=_ago(minutes=5),
    )

    def issue(name: str) -> Any:
        return snapshot_issue(
            principal=owner.principal,
            request=ReconcileRequest(
                subject=name,
                purpose="collections",
                decision_class=COLLECTIONS,
                proposed_action="retain_manual_review",
            ),
        )

    allowed, escalated = issue(subject), issue(contested)
    assert allowed.result == "allow" and escalated.result == "escalate"
    effect = effect_commit(
        principal=owner.principal,
        idempotency_key=f"k-{tag}",
        if_match='"7"',
        snapshot_id=allowed.snapshot_id,
        action="retain_manual_review",
        resulting_value="manual_review",
    ).effect
    if tag == "own":
        # An effect whose key is the segment the bulk route shares (`effects/bulk`): the GET
        # there must answer for it with the effect read's scoping.
        effect_commit(
            principal=owner.principal,
            idempotency_key="bulk",
            if_match='"7"',
            snapshot_id=issue(named).snapshot_id,
            action="retain_manual_review",
            resulting_value="manual_review",
        )
    attested = evidence_attest(
        principal=owner.principal,
        kind="observation",
        subject=subject,
        field="collections_status",
        value="manual_review",
        source="case-ledger",
        observed_at=_ago(minutes=1),
    )
    memory = memory_admit(
        agent=owner.principal,
        memory_class="episodic",
        subject=subject,
        purpose="collections",
        field="collections_status",
        value="manual_review",
        derived_from=[attested.evidence_id],
    )
    return SimpleNamespace(
        subject=subject,
        snapshot_id=allowed.snapshot_id,
        effect_key=effect.idempotency_key,
        evidence_id=attested.evidence_id,
        memory_id=memory.memory_id,
        escalation_id=escalated.escalations.get().escalation_id,
    )


@dataclass
class World:
    own: SimpleNamespace
    other: SimpleNamespace
    contradiction_id: int
    correction_id: str
    quarantine_id: str
    job_id: str

    def of(self, whose: str) -> SimpleNamespace:
        return self.own if whose == "own" else self.other


@pytest.fixture
def world(estate, agent, operator) -> World:
    rival = make_agent("rival-agent", [f"{COLLECTIONS}:retain_manual_review", "attest:case-ledger"])
    own, other = _side(agent, "own"), _side(rival, "other")
    bad = evidence_append(
        kind="observation",
        subject="acct-x",
        field="collections_status",
        value="collect",
        source="case-ledger",
        observed_at=_ago(days=2),
    )
    correction = correction_create(evidence_id=bad.evidence_id, reason="typo", actor=operator.user)
    quarantine = quarantine_create(
        scope="memory_class", target="poisoned", reason="matrix", actor=operator.user
    )
    quarantine_apply(quarantine_id=quarantine.quarantine_id)
    sandbox_authority_write(
        source="eval-registry",
        fact_key="baseline.math-eval",
        owner="eval-team",
        source_revision="r18",
    )
    memory_admit(
        agent=agent.principal,
        memory_class="operational",
        subject="math-eval",
        purpose="nightly-eval-summary",
        fact_key="baseline.math-eval",
        value="ckpt-0519",
        owner="eval-team",
        source_revision="r18",
        derived_from=[bad.evidence_id],
    )
    job = bulk_job_create(
        actor=operator.user, action="readback", keys=[own.effect_key], reason="matrix"
    )
    worker_heartbeat_record("matrix")  # so /readyz answers 200 (a worker is seen alive)
    return World(
        own=own,
        other=other,
        contradiction_id=Contradiction.objects.filter(snapshot__subject="acct-own-esc")
        .values_list("pk", flat=True)
        .get(),
        correction_id=correction.correction_id,
        quarantine_id=quarantine.quarantine_id,
        job_id=job.job_id,
    )
