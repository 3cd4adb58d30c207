"""Compensation: an operator undoes a wrongly applied effect through the same gate.

There is no side door to the owner. The compensating action is reconciled in the operator's
own name (their person principal), so it gets its own snapshot — fresh reads, the policy's
verdict, the version to commit against — and then it is committed like any agent's effect,
with its own idempotency key, If-Match and readback. The operator role grants the one
compensating action in place of an agent's capability; whether it is permitted is still the
policy's call (403 `decision_not_allowed` when it is not).
"""

from __future__ import annotations

import secrets
from typing import Any

from reconcile_app.choices import EffectStatus, Role
from reconcile_app.errors import Conflict, Forbidden, NotFound, ValidationFailed
from reconcile_app.limits import says_nothing
from reconcile_app.models import Effect, Principal
from reconcile_app.roles import has_role
from reconcile_app.selectors.contracts import contract_spec
from reconcile_app.selectors.effects import UNDID_NOTHING
from reconcile_app.services.audit import audit_record
from reconcile_app.services.effects.commit import CommitResult, effect_commit
from reconcile_app.services.effects.state import effect_event
from reconcile_app.services.reconcile import ReconcileRequest, snapshot_issue

# An effect that may have changed the owner's state: what a compensation can undo.
COMPENSABLE = frozenset(
    {EffectStatus.ACCEPTED, EffectStatus.VERIFIED, EffectStatus.POSTCONDITION_FAILED}
)
KEY_PREFIX = "compensate-"


def compensation_live(effect: Effect, *, besides: Effect | None = None) -> Effect | None:
    """The latest compensation of `effect` that was not refused (its `compensated_by`),
    leaving out `besides` (the compensation being recorded, when re-checking)."""
    compensations = Effect.objects.filter(compensates=effect).exclude(status__in=UNDID_NOTHING)
    if besides is not None:
        compensations = compensations.exclude(pk=besides.pk)
    return compensations.order_by("-created_at", "-pk").first()


def _refuse_if_not_compensable(original: Effect, *, besides: Effect | None = None) -> None:
    """409 unless `original` is compensable and no compensation of it (but `besides`) stands."""
    if original.status not in COMPENSABLE:
        raise Conflict(
            f"{original.idempotency_key} is {original.status}: only an effect the owner "
            "accepted (accepted, verified, postcondition failed) can be compensated",
            code="not_compensable",
        )
    live = compensation_live(original, besides=besides)
    if live is not None:
        raise Conflict(
            f"{original.idempotency_key} is already compensated by {live.idempotency_key}",
            code="already_compensated",
            compensated_by=live.idempotency_key,
        )


def effect_compensate(
    *,
    idempotency_key: str,
    action: str,
    resulting_value: Any,
    reason: str,
    principal: Principal,
    actor: Any,
    request_id: str = "",
) -> CommitResult:
    """Reconcile `action` in the operator's name, commit it through the gate, link the two.

    Raises 400 `reason_required`, 403 `forbidden` (not an operator), 404 `effect_not_found`,
    409 `not_compensable` / `already_compensated`, and whatever the reconcile or the gate
    refuses with (403 `decision_not_allowed`, 412, 423, ...). An owner's rejection or an
    unknown outcome is the returned effect's status, as for any commit.
    """
    if says_nothing(reason):
        raise ValidationFailed("a compensation needs a reason", code="reason_required")
    if not has_role(actor, Role.OPERATOR):
        raise Forbidden("only operators compensate effects", code="forbidden")
    original = (
        Effect.objects.select_related("snapshot__contract", "source")
        .filter(idempotency_key=idempotency_key)
        .first()
    )
    if original is None:
        raise NotFound(f"no effect {idempotency_key}", code="effect_not_found")
    # Checked early so a refusal costs no owner reads; checked again under a lock below.
    _refuse_if_not_compensable(original)
    spec = contract_spec(original.snapshot.contract)
    granted = frozenset({action})
    # Reads happen here, before any transaction: network I/O never holds a lock.
    snapshot = snapshot_issue(
        principal=principal,
        request=ReconcileRequest(
            subject=original.subject,
            purpose=spec.purpose,
            decision_class=original.snapshot.decision_class,
            proposed_action=action,
            proposed_value=resulting_value,
        ),
        granted_actions=granted,
    )
    field = spec.actions.get(action, "")
    read = snapshot.content["fields"].get(field) or {}
    # A field that was not read has no version; the gate refuses such a snapshot before it
    # ever compares one.
    version = read.get("version")
    username = getattr(actor, "username", "")

    def audited(compensation: Effect) -> None:
        """Inside the transaction that records the compensating effect."""
        # Two operators can both pass the early check: the second may even reconcile after the
        # first compensation reached the owner, read its new version and apply the undo again.
        # Locking the original serialises their transactions, so the later one sees the
        # earlier's committed compensation here and rolls back its own before anything is
        # sent.
        locked = Effect.objects.select_for_update().get(pk=original.pk)
        _refuse_if_not_compensable(locked, besides=compensation)
        effect_event(
            original,
            "compensated",
            {"by": compensation.idempotency_key, "reason": reason},
            actor=username,
        )
        for ref, link in (
            (original.idempotency_key, {"compensated_by": compensation.idempotency_key}),
            (compensation.idempotency_key, {"compensates": original.idempotency_key}),
        ):
            audit_record(
                actor=actor,
                action="effect.compensate",
                object_kind="effect",
                object_ref=ref,
                reason=reason,
                request_id=request_id,
                after={
                    **link,
                    "action": action,
                    "resulting_value": resulting_value,
                    "snapshot_id": snapshot.snapshot_id,
                },
            )

    try:
        return effect_commit(
            principal=principal,
            idempotency_key=f"{KEY_PREFIX}{secrets.token_hex(8)}",
            if_match=f'"{version if version is not None else 0}"',
            snapshot_id=snapshot.snapshot_id,
            action=action,
            resulting_value=resulting_value,
            compensates=original,
            granted_actions=granted,
            on_recorded=audited,
        )
    except Forbidden as exc:
        if exc.code != "decision_not_allowed":
            raise
        # Say which decision refused it, so the operator can open the snapshot and its reasons.
        decision = snapshot.content["decision"]
        codes = ", ".join(reason["code"] for reason in decision["reasons"]) or "no reason given"
        raise Forbidden(
            f"the policy does not allow {action} on {original.subject} now: "
            f"{decision['result']} ({codes}) in snapshot {snapshot.snapshot_id}",
            code="decision_not_allowed",
            snapshot_id=snapshot.snapshot_id,
            result=decision["result"],
        ) from exc
