"""Escalations: open (once per fact key), freeze, and decide (reviewers, never their own)."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from reconcile_app.advisory_locks import names_held
from reconcile_app.choices import (
    MEMORY_IN_FORCE,
    READ_HISTORY,
    EscalationStatus,
    MemoryStatus,
    Role,
)
from reconcile_app.epochs import epochs_held
from reconcile_app.errors import Conflict, Forbidden, Locked, NotFound, ValidationFailed
from reconcile_app.limits import says_nothing
from reconcile_app.models import DecisionSnapshot, Escalation, MemoryRecord, Principal
from reconcile_app.roles import has_role, roles_forget
from reconcile_app.selectors.kept_records import OWNERLESS
from reconcile_app.services.audit import audit_record
from reconcile_app.services.escalation_own_part import (
    approval_vouching_check,
    raised_by_reviewer_check,
    refusals_of_own_part_audited,
)
from reconcile_app.services.memory_status import memory_status_move
from reconcile_app.services.promotions import promotion_settle

NEXT_ACTIONS = {
    "authority_ambiguous": "confirm which record is the registered {fact_key}",
    "owner_missing": "assign an owner to {fact_key} or retire the ownerless record",
}


# The advisory-lock namespace of fact keys ("FACT" in ASCII): none of the product's other
# advisory locks uses it (the migration lock is a single 64-bit key, another key space).
FACT_KEY_LOCK = 0x46414354


def record_keepable(record: MemoryRecord | None, code: str) -> bool:
    """Whether approving a fact escalation (`code`) may keep `record` current: it is in force
    (not expired or retired since the question was opened), and owned when the question is
    a missing owner (kept, an ownerless record leaves the owner missing: the next read asks
    again). The console offers only these; the decision refuses the others."""
    if record is None or record.status not in MEMORY_IN_FORCE:
        return False
    return code != "owner_missing" or bool(record.owner)


def new_escalation_id() -> str:
    return f"esc_{secrets.token_hex(8)}"


def escalation_open_for_fact(
    *,
    code: str,
    fact_key: str,
    candidate_refs: list[str],
    authority_owner: str,
    requested_by: Principal | None,
) -> Escalation:
    """Open the fact key's escalation, or return the one already open (one per key)."""
    existing = Escalation.objects.filter(fact_key=fact_key, status=EscalationStatus.OPEN).first()
    if existing is not None:
        return existing
    try:
        with transaction.atomic():
            return Escalation.objects.create(
                escalation_id=new_escalation_id(),
                code=code,
                fact_key=fact_key,
                candidate_refs=candidate_refs,
                # Never let the newest-looking record win: with no owner, a person decides.
                owner=authority_owner or settings.RECONCILE_FALLBACK_OWNER,
                next_action=NEXT_ACTIONS[code].format(fact_key=fact_key),
                allowed_until_resolved=READ_HISTORY,
                write_allowed=False,
                requested_by=requested_by,
                opened_at=timezone.now(),
            )
    except IntegrityError:
        # A concurrent request opened it first: the partial unique index guarantees one.
        return Escalation.objects.get(fact_key=fact_key, status=EscalationStatus.OPEN)


def escalation_for_snapshot(
    *,
    snapshot: DecisionSnapshot,
    conflict_key: str,
    owner: str,
    reasons: list[dict[str, str]],
    candidate_refs: list[str],
    requested_by: Principal,
    commit_window_seconds: int,
) -> Escalation:
    """The escalation an `escalate` snapshot joins or opens, inside the snapshot's transaction.

    A retry that raises the same question (services/conflicts.py) joins the open escalation;
    so does one that arrives while a decision on it is still within its commit window, so an
    agent retrying just after the reviewer decided learns the outcome instead of reopening the
    question. Anything else opens a new escalation.
    """
    joinable = _joinable(conflict_key, commit_window_seconds)
    if joinable is not None:
        joinable.joined_snapshots.add(snapshot)
        return joinable
    action = snapshot.proposed_action or "the decision"
    try:
        with transaction.atomic():
            return Escalation.objects.create(
                escalation_id=new_escalation_id(),
                code=reasons[0]["code"] if reasons else "escalated",
                snapshot=snapshot,
                conflict_key=conflict_key,
                candidate_refs=candidate_refs,
                owner=owner or settings.RECONCILE_FALLBACK_OWNER,
                next_action=f"review the snapshot and approve or reject {action}",
                allowed_until_resolved=READ_HISTORY,
                write_allowed=False,
                detail="; ".join(reason["detail"] for reason in reasons),
                requested_by=requested_by,
                opened_at=snapshot.issued_at,
            )
    except IntegrityError:
        # A concurrent retry opened it first: the partial unique index keeps one open.
        opened = Escalation.objects.get(conflict_key=conflict_key, status=EscalationStatus.OPEN)
        opened.joined_snapshots.add(snapshot)
        return opened


def _joinable(conflict_key: str, commit_window_seconds: int) -> Escalation | None:
    recent = timezone.now() - timedelta(seconds=commit_window_seconds)
    return (
        Escalation.objects.filter(conflict_key=conflict_key)
        .filter(Q(status=EscalationStatus.OPEN) | Q(decided_at__gte=recent))
        .order_by("-opened_at", "-id")
        .first()
    )


def fact_keys_held(fact_key: str, derived_from: Sequence[str] = ()) -> None:
    """Inside a transaction: the freeze of `fact_key`, and of each key a memory among
    `derived_from` records, waits until it ends, or was opened before and is seen by its
    checks (fact_key_write_check, fact_candidates_check); the freeze takes the same lock
    (services/facts.fact_current). PostgreSQL advisory locks, taken in the order of their
    ids (not the keys': two keys whose ids collide share a lock, and sorting by key could
    then take it out of order) so two holders never wait on each other; SQLite's IMMEDIATE
    transactions serialise writers."""
    if connection.vendor != "postgresql":
        return
    memory_ids = [ref.partition(":")[2] for ref in derived_from if ref.startswith("memory:")]
    keys = {fact_key} | set(
        MemoryRecord.objects.filter(memory_id__in=memory_ids)
        .exclude(fact_key="")
        .values_list("fact_key", flat=True)
        if memory_ids
        else ()
    )
    names_held(FACT_KEY_LOCK, [key for key in keys if key])


def fact_key_write_check(fact_key: str) -> None:
    """Writes to a fact key wait while its escalation is open; history stays readable."""
    if not fact_key:
        return
    open_escalation = (
        Escalation.objects.filter(fact_key=fact_key, status=EscalationStatus.OPEN)
        .values_list("escalation_id", flat=True)
        .first()
    )
    if open_escalation:
        raise Locked(
            f"{fact_key} is frozen until escalation {open_escalation} is resolved",
            code="fact_key_frozen",
            escalation_id=open_escalation,
        )


def fact_candidates_check(derived_from: Sequence[str]) -> None:
    """Nothing may be derived from a candidate of a frozen fact key (seed 001: "it may not
    write a derived fact from either candidate") until the escalation is resolved."""
    memory_ids = {
        reference.partition(":")[2] for reference in derived_from if reference.startswith("memory:")
    }
    if not memory_ids:
        return
    for escalation_id, fact_key, candidates in (
        Escalation.objects.filter(status=EscalationStatus.OPEN)
        .exclude(fact_key="")
        .values_list("escalation_id", "fact_key", "candidate_refs")
    ):
        frozen = memory_ids & set(candidates)
        if frozen:
            raise Locked(
                f"{', '.join(sorted(frozen))} is a candidate of {fact_key}, frozen until "
                f"escalation {escalation_id} is resolved",
                code="fact_key_frozen",
                escalation_id=escalation_id,
                fact_key=fact_key,
            )


def _state(escalation: Escalation) -> dict[str, Any]:
    return {
        "status": escalation.status,
        "write_allowed": escalation.write_allowed,
        "selected_ref": escalation.selected_ref,
    }


def escalation_decide(
    *,
    escalation_id: str,
    reviewer: Any,
    approve: bool,
    rationale: str,
    selected_ref: str | None = None,
    request_id: str = "",
) -> Escalation:
    if not has_role(reviewer, Role.REVIEWER):
        raise Forbidden("deciding escalations needs the reviewer role", code="forbidden")
    if says_nothing(rationale):
        raise ValidationFailed("a decision needs a rationale", code="rationale_required")
    with (
        refusals_of_own_part_audited(
            escalation_id=escalation_id,
            reviewer=reviewer,
            approve=approve,
            rationale=rationale,
            request_id=request_id,
        ),
        transaction.atomic(),
    ):
        # The epochs first, as every write under them takes them (epochs.epochs_held): a
        # quarantine of a promotion's class then waits for the decision, or committed before
        # and refuses it (promotion_settle); never promoted into a class quarantined since.
        epochs_held()
        # The role again, now that the epochs are held: taking it away moves the
        # configuration epoch, so it committed since the check above and is read here, or
        # waits for this decision.
        roles_forget(reviewer)
        if not has_role(reviewer, Role.REVIEWER):
            raise Forbidden("deciding escalations needs the reviewer role", code="forbidden")
        escalation = (
            Escalation.objects.select_for_update(of=("self",))
            .select_related("requested_by")
            .filter(escalation_id=escalation_id)
            .first()
        )
        if escalation is None:
            raise NotFound(f"no escalation {escalation_id}", code="escalation_not_found")
        raised_by_reviewer_check(escalation, reviewer)
        if escalation.status != EscalationStatus.OPEN:
            raise Conflict(
                f"{escalation_id} is already {escalation.status}", code="already_decided"
            )
        if selected_ref and not (approve and escalation.fact_key):
            # Stored, it would read as the decision's choice (the page badges it "kept")
            # while nothing was chosen.
            raise ValidationFailed(
                "only approving a fact key's escalation selects a record: a rejection keeps "
                "nothing, and a decision's, promotion's or effect's question has none to choose",
                code="invalid_selection",
                candidates=escalation.candidate_refs if escalation.fact_key else [],
            )
        if approve:
            approval_vouching_check(escalation, reviewer, selected_ref)
        before = _state(escalation)
        # One instant for the decision and the status events it causes, so an as_of
        # question at decided_at sees the memories as the decision left them.
        now = timezone.now()
        retired: list[str] = []
        if approve and escalation.fact_key:
            retired = _settle_fact(escalation, selected_ref, at=now)
        if escalation.memory_id is not None:
            promotion_settle(
                escalation=escalation,
                approve=approve,
                reviewer=reviewer,
                rationale=rationale,
                request_id=request_id,
                at=now,
            )
        escalation.status = EscalationStatus.APPROVED if approve else EscalationStatus.REJECTED
        escalation.decided_at = now
        escalation.decided_by = reviewer
        escalation.rationale = rationale
        escalation.selected_ref = selected_ref or ""
        # A fact key's freeze lifts either way; a snapshot or promotion is allowed only
        # when approved (the console shows this flag as "write allowed").
        escalation.write_allowed = approve or bool(escalation.fact_key)
        escalation.save(
            update_fields=[
                "status",
                "decided_at",
                "decided_by",
                "rationale",
                "selected_ref",
                "write_allowed",
            ]
        )
        audit_record(
            actor=reviewer,
            action="escalation.approve" if approve else "escalation.reject",
            object_kind="escalation",
            object_ref=escalation.escalation_id,
            reason=rationale,
            request_id=request_id,
            before=before,
            after={**_state(escalation), "retired": retired},
        )
    return escalation


def _settle_fact(escalation: Escalation, selected_ref: str | None, *, at: datetime) -> list[str]:
    """Keep the selected record current and retire the other candidates, atomically."""
    if escalation.code == "authority_ambiguous" and not selected_ref:
        raise ValidationFailed(
            "approving an ambiguity selects one candidate (selected_ref)", code="selection_required"
        )
    if selected_ref and selected_ref not in escalation.candidate_refs:
        raise ValidationFailed(
            f"{selected_ref} is not a candidate of {escalation.escalation_id}",
            code="invalid_selection",
            candidates=escalation.candidate_refs,
        )
    if selected_ref:
        # Held until the decision commits: an expiry run moving one waits, or moved it first.
        candidates = MemoryRecord.objects.select_for_update().filter(
            memory_id__in=escalation.candidate_refs
        )
        kept = {
            record.memory_id for record in candidates if record_keepable(record, escalation.code)
        }
        if selected_ref not in kept:
            # Keeping it would settle nothing, and retire the candidates that would.
            raise ValidationFailed(
                f"{selected_ref} cannot be kept: it is no longer in force (expired or retired "
                "since the question was opened) or has no owner. Select one of the "
                "candidates, or reject",
                code="invalid_selection",
                candidates=[ref for ref in escalation.candidate_refs if ref in kept],
            )
    to_retire = MemoryRecord.objects.filter(
        fact_key=escalation.fact_key, status__in=MEMORY_IN_FORCE
    ).exclude(memory_id=selected_ref or "")
    if escalation.code == "owner_missing" and not selected_ref:
        to_retire = to_retire.filter(OWNERLESS)
    by_pk = dict(to_retire.values_list("pk", "memory_id"))
    moved = memory_status_move(
        memory_ids=list(by_pk),
        source_statuses=MEMORY_IN_FORCE,
        to=MemoryStatus.HISTORICAL_ONLY,
        cause=f"retired by escalation {escalation.escalation_id}",
        at=at,
    )
    return sorted(by_pk[pk] for pk in moved)
