"""The gate an effect passes before it is recorded: what its snapshot must still say.

A snapshot authorises a commit only while every one of these holds: it was issued to this
principal, it allowed this action — or it escalated and a reviewer approved its escalation,
which then authorises exactly the proposed action — (which the principal may still take), it
binds the value
being written (when it bound one) and the contract lets the action write it, its contract
version is still the active one, no evidence it relied on has been withdrawn, the If-Match
is the version it read, and its commit window is open.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from reconcile_app.canonical import same_value
from reconcile_app.choices import DecisionResult, EscalationStatus
from reconcile_app.epochs import Epochs, epochs_held, epochs_repin
from reconcile_app.errors import DomainError, Forbidden
from reconcile_app.models import (
    DecisionSnapshot,
    Escalation,
    Principal,
    Source,
)
from reconcile_app.selectors.approvals import (
    escalation_approver,
    snapshot_approval,
    unseen_state,
)
from reconcile_app.selectors.configuration import capable_actions, source_named
from reconcile_app.selectors.contracts import contract_spec
from reconcile_app.services.effects.standing import Grounds, quarantined, superseded, withdrawn
from reconcile_app.services.evidence import ledger_held
from reconcile_app.services.principals import access_held


class PreconditionFailed(DomainError):
    status = 412
    code = "version_changed"
    title = "Precondition failed"


@dataclass(frozen=True)
class Authorisation:
    source: Source  # the owner system the effect is sent to
    escalation: Escalation | None  # the approved escalation, for an `escalate` snapshot
    approved_by: str  # its reviewer ("" when the snapshot allowed the action itself)


@dataclass(frozen=True)
class ActionTarget:
    field: str  # "" when the snapshot's contract has no such action
    values: list[Any] | None  # what the action may write; None: whatever policy allowed


def action_target(snapshot: DecisionSnapshot | None, action: str) -> ActionTarget:
    if snapshot is None:
        return ActionTarget(field="", values=None)
    # A loaded contract version never changes: its engine view is cached (selectors/contracts).
    spec = contract_spec(snapshot.contract)
    if action not in spec.actions:
        return ActionTarget(field="", values=None)
    values = spec.action_values.get(action)
    return ActionTarget(
        field=spec.actions[action], values=list(values) if values is not None else None
    )


def authorisation_held(
    seen: Epochs,
    authorised: Authorisation,
    gate: Callable[[], Authorisation],
    snapshot: DecisionSnapshot,
) -> Authorisation:
    """First in the transaction that records the effect: the gate's answer still holds.

    The gate runs before that transaction: a quarantine of the source, a capability taken
    away or another contract version activated meanwhile would otherwise be recorded and
    sent all the same (so would one whose key was revoked, or whose principal disabled,
    after authentication). The epochs are held until the effect is recorded, so such a
    change either waits for it (the effect was authorised first), or committed since the
    gate ran and moved an epoch: then access and the gate are checked again, on what is
    current now.
    """
    if epochs_held() == seen:
        return authorised
    epochs_repin()
    # The gate asks what the principal may do, not whether it may still act at all: a key
    # revoked or the principal disabled since the request was authenticated stops it here.
    access_held(snapshot.principal_id)
    snapshot.contract.refresh_from_db(fields=["status", "activated_at"])
    return gate()


def evidence_held(snapshot: DecisionSnapshot) -> None:
    """Last in the transaction that records the effect: the snapshot's evidence still
    stands. A correction (or a superseding entry) appended since the gate asked would
    otherwise let the effect be recorded and sent on withdrawn evidence. With the ledger's
    head held, one appended later waits for the record. Last, so the head is taken after
    every row lock the record takes (an accept locks its effect, then appends)."""
    ledger_held()
    snapshot_withdrawn_check(snapshot)


def effect_authorise(
    *,
    principal: Principal,
    snapshot: DecisionSnapshot,
    action: str,
    target: ActionTarget,
    resulting_value: Any,
    expected: int,
    granted_actions: frozenset[str] = frozenset(),
) -> Authorisation:
    """Everything the snapshot must say before an effect may be recorded.

    `granted_actions`: what a person's role grants beside the principal's capabilities (an
    operator's compensation); every other check applies unchanged.
    """
    decision = snapshot.content["decision"]
    if snapshot.principal_id != principal.pk:
        raise Forbidden("the snapshot was issued to another principal", code="decision_not_allowed")
    escalation = None
    window_opened = snapshot.issued_at
    committable = decision["permitted_actions"]
    if decision["result"] == DecisionResult.ESCALATE:
        escalation = _approved(snapshot)
        assert escalation.decided_at is not None  # approved escalations are decided
        window_opened = escalation.decided_at
        # The reviewer approved the proposal on the page: that action, nothing else.
        committable = [snapshot.content["binding"]["proposed_action"]]
    elif decision["result"] != DecisionResult.ALLOW:
        raise Forbidden(
            f"the snapshot's decision is {decision['result']}, not allow",
            code="decision_not_allowed",
        )
    if action not in committable or not target.field:
        raise Forbidden(
            f"{action} is not among the permitted actions {committable}",
            code="decision_not_allowed",
        )
    if action not in capable_actions(principal, snapshot.decision_class) | granted_actions:
        raise Forbidden(
            f"{principal.name} has no capability {snapshot.decision_class}:{action}",
            code="capability_missing",
        )
    _check_payload(snapshot, action, target, resulting_value)
    snapshot_still_authoritative_check(snapshot)
    read = snapshot.content["fields"][target.field]
    if escalation is not None:
        _approved_state_check(snapshot, escalation, target.field)
    if read["version"] != expected:
        raise PreconditionFailed(
            f"If-Match {expected} is not the version the snapshot read ({read['version']})",
            code="snapshot_version_mismatch",
            expected=read["version"],
            found=expected,
        )
    window = snapshot.contract.commit_window_seconds
    age = (timezone.now() - window_opened).total_seconds()
    if age > window:
        since = "approved" if escalation is not None else "issued"
        raise PreconditionFailed(
            f"the snapshot was {since} {age:.0f}s ago; its commit window is {window}s: "
            "reconcile again",
            code="snapshot_expired",
        )
    return Authorisation(
        source=source_named(read["source"]),
        escalation=escalation,
        approved_by=escalation_approver(escalation) if escalation is not None else "",
    )


def _approved(snapshot: DecisionSnapshot) -> Escalation:
    """An `escalate` snapshot authorises only once its escalation is approved."""
    escalation = snapshot_approval(snapshot)
    if escalation is None:
        raise Forbidden(
            "the snapshot's decision is escalate and no escalation decides it",
            code="decision_not_allowed",
        )
    if escalation.status == EscalationStatus.OPEN:
        raise Forbidden(
            f"the snapshot waits on escalation {escalation.escalation_id}: a reviewer has not "
            f"decided it yet (GET /api/v1/escalations/{escalation.escalation_id} tells when)",
            code="escalation_pending",
            escalation_id=escalation.escalation_id,
        )
    if escalation.status != EscalationStatus.APPROVED:
        raise Forbidden(
            f"escalation {escalation.escalation_id} was {escalation.status}: the snapshot "
            "authorises nothing",
            code="escalation_rejected",
            escalation_id=escalation.escalation_id,
        )
    return escalation


def _approved_state_check(snapshot: DecisionSnapshot, escalation: Escalation, field: str) -> None:
    """403 `approved_state_moved` for a snapshot that joined the escalation and read a state
    the reviewer did not see (`unseen_state`)."""
    unseen = unseen_state(snapshot, escalation, field)
    if unseen is None:
        return
    what = "version" if unseen.field == field else "value"
    raise Forbidden(
        f"escalation {escalation.escalation_id} was approved with {unseen.field} at "
        f"{what} {unseen.seen!r}; this snapshot, which joined it, read {what} "
        f"{unseen.found!r}, which no reviewer saw. Commit {unseen.approved_snapshot_id} while "
        "its window is open, or reconcile again once it has closed for a new review.",
        code="approved_state_moved",
        escalation_id=escalation.escalation_id,
        approved_snapshot_id=unseen.approved_snapshot_id,
        field=unseen.field,
    )


def _check_payload(
    snapshot: DecisionSnapshot, action: str, target: ActionTarget, resulting_value: Any
) -> None:
    """The snapshot authorises a value, not only an action: what was proposed, within what
    the contract lets the action write."""
    binding = snapshot.content["binding"]
    if "proposed_value" in binding and (
        action != binding["proposed_action"]
        or not same_value(resulting_value, binding["proposed_value"])
    ):
        raise Forbidden(
            f"the snapshot authorises {binding['proposed_action']} writing "
            f"{binding['proposed_value']!r}, not {action} writing {resulting_value!r}",
            code="effect_not_bound",
        )
    if target.values is not None and not any(
        same_value(resulting_value, value) for value in target.values
    ):
        raise Forbidden(
            f"{action} may write {target.values!r}, not {resulting_value!r}",
            code="value_not_permitted",
            permitted_values=target.values,
        )


def snapshot_still_authoritative_check(snapshot: DecisionSnapshot) -> None:
    """A snapshot stops authorising when its rules or its evidence are withdrawn."""
    grounds = Grounds.of(snapshot)
    refusal = superseded(grounds) or withdrawn([grounds]).get(snapshot.pk)
    if refusal is not None:
        raise refusal


def snapshot_withdrawn_check(snapshot: DecisionSnapshot) -> None:
    """409 `snapshot_tainted` once evidence the snapshot used is revoked or superseded (a
    correction, or an entry superseding it) or a correction tainted the snapshot."""
    refusal = withdrawn([Grounds.of(snapshot)]).get(snapshot.pk)
    if refusal is not None:
        raise refusal


def snapshot_sources_check(snapshot: DecisionSnapshot) -> None:
    """423 `source_quarantined` when a source whose answer informed the decision is
    quarantined now."""
    refusal = quarantined([Grounds.of(snapshot)]).get(snapshot.pk)
    if refusal is not None:
        raise refusal
