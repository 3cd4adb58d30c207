"""A memory write or a promotion racing an operator's change, on PostgreSQL: the change either
waits for the write (which was admitted first), or committed before it and stops it.

The write's checks of its class's quarantine, of its fact key's freeze and of its writer's
access used to run without a lock: a quarantine committed between the check and the write
let a memory into a class quarantined a moment earlier (and the quarantine's `affected`
count, taken as it applied, missed it); a fact key frozen meanwhile took a write; a key
revoked or an agent disabled after the request was authenticated did not stop it.

Each test pauses the write at one point, in this thread, and makes the change from another,
so the interleaving is forced, not hoped for (the pattern of
tests/reconcile_app/effects/test_commit_lock_order.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection

from reconcile_app.errors import DomainError
from reconcile_app.models import Escalation, EvidenceEntry, MemoryRecord
from reconcile_app.services import evidence as evidence_module
from reconcile_app.services import memory as memory_module
from reconcile_app.services import promotions as promotions_module
from reconcile_app.services.agent_access import agent_enabled_set, agent_key_rotate
from reconcile_app.services.corrections import correction_create
from reconcile_app.services.escalations import escalation_decide
from reconcile_app.services.evidence import evidence_append
from reconcile_app.services.facts import fact_current
from reconcile_app.services.memory import fact_today, memory_admit
from reconcile_app.services.quarantine import quarantine_apply, quarantine_create
from tests.conftest import ago, make_person
from tests.races import paused_race
from tests.reconcile_app.facts.conftest import REGISTRY, authority

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks: PostgreSQL"),
    pytest.mark.django_db(transaction=True),
]


_race = paused_race


def _evidence() -> None:
    evidence_append(
        kind="observation",
        subject="math-eval",
        field="baseline",
        value="ckpt-0519",
        source=REGISTRY,
        observed_at=ago(days=1),
        evidence_id="ev-race",
    )


def _write(agent, memory_class: str, memory_id: str, **target: Any) -> Callable[[], Any]:
    def write() -> Any:
        record = memory_admit(
            agent=agent.principal,
            memory_class=memory_class,
            subject="math-eval",
            purpose="nightly-eval-summary",
            value="ckpt-0519",
            derived_from=["ev-race"],
            memory_id=memory_id,
            **(target or {"field": "baseline"}),
        )
        return record.status

    return write


def _quarantine_applied(operator, memory_class: str) -> Callable[[], Any]:
    def change() -> Any:
        created = quarantine_create(
            scope="memory_class", target=memory_class, reason="poisoned", actor=operator.user
        )
        return quarantine_apply(quarantine_id=created.quarantine_id).affected

    return change


def _suggested_procedure(agent: Any) -> Escalation:
    """A runbook the agent suggests (derived from ev-race), and the promotion reviewing it."""
    _evidence()
    _write(agent, "runbooks", "mem-procedure")()
    return Escalation.objects.get(memory__memory_id="mem-procedure")


def _promotion_approved(escalation: Escalation) -> Callable[[], Any]:
    reviewer = make_person("rhys-reviewer", "reviewer")
    return lambda: (
        escalation_decide(
            escalation_id=escalation.escalation_id,
            reviewer=reviewer.user,
            approve=True,
            rationale="a sound procedure",
        ).status
    )


def test_a_class_quarantined_while_a_memory_is_written_waits_and_counts_it(
    estate, agent, operator, monkeypatch
):
    _evidence()
    seen = _race(
        monkeypatch,
        memory_module,
        "memory_class_check",
        _write(agent, "episodic", "mem-raced"),
        _quarantine_applied(operator, "episodic"),
    )
    assert (seen["write"], seen["waited"]) == ("current", True), seen
    # The quarantine came after the memory, and lists it among what it affects.
    assert seen["change"]["memories"] == 1, seen


def test_a_class_quarantined_while_a_promotion_is_decided_waits_for_it(
    estate, agent, operator, monkeypatch
):
    escalation = _suggested_procedure(agent)
    seen = _race(
        monkeypatch,
        promotions_module,
        "memory_class_check",
        _promotion_approved(escalation),
        _quarantine_applied(operator, "runbooks"),
    )
    assert (seen["write"], seen["waited"]) == ("approved", True), seen
    assert seen["change"]["memories_current"] == 0  # active, not current: counted as memories
    assert seen["change"]["memories"] == 1


def test_a_fact_key_frozen_while_it_is_written_sees_the_write_among_its_candidates(
    estate, agent, monkeypatch
):
    """The freeze waits for the write and weighs it; it never opens on candidates that a
    write landing after it leaves out (a reviewer keeping one of them would keep a record
    the write had meanwhile superseded, or leave the newer one unseen)."""
    _evidence()
    authority("baseline.race")
    fact = {"fact_key": "baseline.race", "owner": REGISTRY, "source_revision": "registry@r18"}
    _write(agent, "operational", "fact-a", **fact)()
    _write(agent, "operational", "fact-b", **fact)()
    seen = _race(
        monkeypatch,
        memory_module,
        "fact_key_write_check",
        _write(agent, "operational", "fact-c", **fact),
        lambda: (
            fact_current(
                fact_key="baseline.race", on=fact_today(), requested_by=agent.principal
            ).escalation
        ),
    )
    assert (seen["write"], seen["waited"]) == ("current", True), seen
    assert sorted(seen["change"].candidate_refs) == ["fact-a", "fact-b", "fact-c"]


def test_a_write_is_refused_once_its_fact_key_froze(estate, agent, monkeypatch):
    """The other order: the freeze committed first; the write, checked after, is refused."""
    _evidence()
    authority("baseline.race")
    fact = {"fact_key": "baseline.race", "owner": REGISTRY, "source_revision": "registry@r18"}
    _write(agent, "operational", "fact-a", **fact)()
    _write(agent, "operational", "fact-b", **fact)()
    frozen = fact_current(fact_key="baseline.race", on=fact_today(), requested_by=agent.principal)
    assert frozen.escalation is not None
    with pytest.raises(DomainError) as refused:
        _write(agent, "operational", "fact-c", **fact)()
    assert refused.value.code == "fact_key_frozen"


ACCESS_CHANGES = {
    "disable": lambda name, actor: agent_enabled_set(
        name=name, enabled=False, reason="misbehaving", actor=actor
    ),
    "rotate": lambda name, actor: agent_key_rotate(name=name, reason="leaked", actor=actor),
}


def _memory_post(agent) -> Callable[[], Any]:
    def post() -> Any:
        response = agent.post(
            "/api/v1/memories",
            {
                "memory_id": "mem-after-revoke",
                "memory_class": "episodic",
                "subject": "math-eval",
                "purpose": "nightly-eval-summary",
                "field": "baseline",
                "value": "ckpt-0519",
                "derived_from": ["ev-race"],
            },
        )
        return response.status_code, response.json()["code"] if response.status_code >= 400 else ""

    return post


@pytest.mark.parametrize("change", sorted(ACCESS_CHANGES))
def test_access_taken_back_after_authentication_stops_the_memory_write(
    estate, agent, operator, monkeypatch, change
):
    """The key opened the request; the operator took it back before the write was recorded
    (paused before the write's transaction): nothing is recorded."""
    _evidence()
    seen = _race(
        monkeypatch,
        memory_module,
        "consent_check",
        _memory_post(agent),
        lambda: bool(ACCESS_CHANGES[change](agent.name, operator.user)),
    )
    assert seen["change"] is True, seen
    assert seen["write"] == (401, "authentication_failed"), seen
    assert not MemoryRecord.objects.filter(memory_id="mem-after-revoke").exists()


@pytest.mark.parametrize("change", sorted(ACCESS_CHANGES))
def test_access_taken_back_while_the_memory_is_recorded_waits_for_it(
    estate, agent, operator, monkeypatch, change
):
    """Paused inside the write's transaction: the change waits, deadlocking nothing."""
    _evidence()
    seen = _race(
        monkeypatch,
        memory_module,
        "memory_class_check",
        _memory_post(agent),
        lambda: bool(ACCESS_CHANGES[change](agent.name, operator.user)),
    )
    assert (seen["write"], seen["change"], seen["waited"]) == ((201, ""), True, True), seen


def test_consent_withdrawn_while_a_preference_is_written_admits_nothing(
    estate, agent, operator, monkeypatch
):
    """The consent was checked before the write's transaction; an operator revoked it before
    the record landed. Checked again under the ledger's head (held to the end, as an
    effect's commit holds it), the preference is refused."""
    evidence_append(
        kind="consent",
        subject="math-eval",
        field="contact_channel",
        value="granted",
        source=REGISTRY,
        observed_at=ago(days=1),
        evidence_id="ev-consent",
    )
    seen = _race(
        monkeypatch,
        memory_module,
        "consent_check",
        lambda: (
            memory_admit(
                agent=agent.principal,
                memory_class="customer-preferences",
                subject="math-eval",
                purpose="nightly-eval-summary",
                field="contact_channel",
                value="sms",
                derived_from=["ev-consent"],
                memory_id="pref-raced",
            ).status
        ),
        lambda: (
            correction_create(
                evidence_id="ev-consent", reason="consent withdrawn by phone", actor=operator.user
            ).correction_id
        ),
    )
    assert seen["write"] == "consent_missing", seen
    assert not MemoryRecord.objects.filter(memory_id="pref-raced").exists()


def _attestation(persona, evidence_id: str) -> Callable[[], Any]:
    return lambda: (
        persona.post(
            "/api/v1/evidence",
            {
                "evidence_id": evidence_id,
                "kind": "observation",
                "subject": "A-1",
                "field": "collections_status",
                "value": "collect",
                "source": "case-ledger",
                "observed_at": "2026-08-30T09:00:00Z",
            },
        ).status_code
    )


@pytest.mark.parametrize("change", sorted(ACCESS_CHANGES))
def test_access_taken_back_after_authentication_stops_the_attestation(
    estate, agent, operator, monkeypatch, change
):
    """The same for evidence the agent vouches for: nothing is appended."""
    seen = _race(
        monkeypatch,
        evidence_module,
        "observed_at_check",
        _attestation(agent, "ev-after-revoke"),
        lambda: bool(ACCESS_CHANGES[change](agent.name, operator.user)),
    )
    assert (seen["write"], seen["change"]) == (401, True), seen
    assert not EvidenceEntry.objects.filter(evidence_id="ev-after-revoke").exists()


def test_an_operator_role_taken_back_after_authentication_stops_an_attestation(
    estate, operator, monkeypatch
):
    """An operator may attest any source; one whose role is taken away while the request
    runs is asked again as what they are now (no `attest:` capability): nothing appended."""
    seen = _race(
        monkeypatch,
        evidence_module,
        "observed_at_check",
        _attestation(operator, "ev-after-demotion"),
        lambda: operator.user.groups.clear() or True,
    )
    assert (seen["write"], seen["change"]) == (403, True), seen
    assert not EvidenceEntry.objects.filter(evidence_id="ev-after-demotion").exists()


@pytest.mark.parametrize(
    ("point", "decided", "waited"),
    [
        # Paused before its grounds are weighed: the correction commits first and is seen.
        ("memory_class_check", "memory_tainted", False),
        # Paused after, the ledger's head held: the correction waits, then lists the memory.
        ("corrections_upstream", "approved", True),
    ],
)
def test_a_correction_while_a_promotion_is_decided_is_seen_or_waits(
    estate, agent, operator, monkeypatch, point, decided, waited
):
    escalation = _suggested_procedure(agent)

    seen = _race(
        monkeypatch,
        promotions_module,
        point,
        _promotion_approved(escalation),
        lambda: correction_create(evidence_id="ev-race", reason="misread", actor=operator.user),
    )

    assert (seen["write"], seen["waited"]) == (decided, waited), seen
    status = MemoryRecord.objects.get(memory_id="mem-procedure").status
    assert status == ("active" if decided == "approved" else "suggested")
    assert seen["change"].counts.get("memory") == 1  # in the correction's list to review
