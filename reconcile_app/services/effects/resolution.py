"""Resolving unknown outcomes: the owner's ledger, then the target state; or a person's word.

Nothing is re-sent blindly: a resolution asks the owner's effect ledger by idempotency key,
then reads the target; what neither proves stays `unknown` for people to triage.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Exists
from django.utils import timezone

from reconcile_app.canonical import rfc3339, same_value
from reconcile_app.choices import EffectStatus, EvidenceKind, ReadStatus
from reconcile_app.errors import Conflict, NotFound, ValidationFailed
from reconcile_app.limits import says_nothing
from reconcile_app.models import Effect
from reconcile_app.selectors.effects import may_still_execute_until
from reconcile_app.services.audit import audit_record
from reconcile_app.services.effects.state import (
    READBACK_RECHECK_SECONDS,
    READBACK_STATUSES,
    RESOLUTION_BACKOFF,
    RESOLVABLE,
    effect_accept,
    effect_check_failed,
    effect_event,
    effect_locked,
    source_held,
    view_predates,
)
from reconcile_app.services.enqueue import enqueue_on_commit, enqueue_or_refuse
from reconcile_app.services.evidence import evidence_append
from reconcile_app.sources import LookupOutcome, LookupResult, adapter_for
from reconcile_app.sources.owner_answers import receipt_problem


def resolution_observed(effect: Effect, outcome: str) -> dict[str, Any]:
    """A resolution's ledger entry, less its source, time and note: an observation of what
    became of the command, on the effect's subject but on no field. On the effect's field its
    value (the resolution itself) disagreed with the owner's state, and every later decision
    on the subject met an open contradiction (escalated or refused) until someone attested
    the field again; kept as an `effect_receipt` it would have said a person's word was the
    owner's receipt. The field it concerns is in the value."""
    return {
        "kind": EvidenceKind.OBSERVATION,
        "subject": effect.subject,
        "field": "",
        "value": {
            "idempotency_key": effect.idempotency_key,
            "field": effect.field,
            "outcome": outcome,
        },
        "derived_from": [effect.snapshot.snapshot_id],
        "derived_from_held": True,
        "generated_by": effect.idempotency_key,
    }


def effect_resolve_unknown(*, effect_id: int) -> Effect:
    """unknown → accepted | not_executed, or stays unknown (with the next check scheduled)."""
    effect = Effect.objects.select_related("source", "snapshot").get(pk=effect_id)
    if effect.status != EffectStatus.UNKNOWN:
        return effect
    attempt = effect.resolution_attempts + 1
    if source_held(effect.source.name):
        # Pushed back only while the quarantine still holds, in the same statement: a lift
        # that committed since the check above made the effect due (quarantine_lift), and
        # must not be undone for half an hour.
        from reconcile_app.services.quarantine import source_quarantines_in_force

        Effect.objects.filter(pk=effect.pk, status=EffectStatus.UNKNOWN).filter(
            Exists(source_quarantines_in_force(effect.source.name))
        ).update(next_check_at=timezone.now() + timedelta(seconds=RESOLUTION_BACKOFF[-1]))
        effect_check_failed(effect.pk, f"{effect.source.name} is quarantined; resolution held")
        return effect
    adapter = adapter_for(effect.source)
    # Asked after this instant, the owner's ledger and target are final: a command it has not
    # executed by then it never will (its published execution bound).
    final_after = adapter.executes_until(effect.sent_at or effect.created_at)
    asked_at = timezone.now()
    lookup = adapter.lookup_effect(effect.idempotency_key)
    if lookup.outcome == LookupOutcome.FOUND:
        # The ledger's receipt settles it only as proof of this command (any adapter's).
        problem = receipt_problem(
            lookup.receipt,
            idempotency_key=effect.idempotency_key,
            subject=effect.subject,
            field=effect.field,
            expected_version=effect.expected_version,
        )
        if problem is None:
            return effect_accept(
                effect_id=effect.pk, receipt=lookup.receipt or {}, via="resolution"
            )
        lookup = LookupResult(outcome=LookupOutcome.UNAVAILABLE, detail=problem)
    target = adapter.read(effect.subject, effect.field)
    # A view older than the command (a lagging replica) shows the version it was sent against
    # whether or not it executed: only a view from after it proves the target untouched. One
    # that vouches for no time (no `observed_at`) proves nothing, as such a read is stale.
    current = target.observed_at is not None and not view_predates(target, effect)
    untouched = (
        target.status == ReadStatus.OK and target.version == effect.expected_version and current
    )
    with transaction.atomic():
        effect = effect_locked(effect_id)
        if effect.status != EffectStatus.UNKNOWN:
            return effect
        if lookup.outcome == LookupOutcome.NOT_FOUND and untouched and asked_at >= final_after:
            # The owner's ledger never saw the key and the target is still at the version we
            # sent against, asked when it could no longer execute: it did not.
            entry = evidence_append(
                **resolution_observed(effect, "not_executed"),
                source=effect.source.name,
                observed_at=target.observed_at or timezone.now(),
                note="resolution: owner's ledger has no such key; target unchanged",
            )
            Effect.objects.filter(pk=effect.pk, status=EffectStatus.UNKNOWN).update(
                status=EffectStatus.NOT_EXECUTED,
                resolution_attempts=attempt,
                next_check_at=None,
                last_check_error="",
                outcome={**effect.outcome, "resolution": "not_executed"},
            )
            effect_event(
                effect, "resolution", {"outcome": "not_executed"}, evidence_id=entry.evidence_id
            )
        else:
            delay = RESOLUTION_BACKOFF[min(attempt, len(RESOLUTION_BACKOFF) - 1)]
            detail: dict[str, Any] = {
                "attempt": attempt,
                # Cut as effect_check_failed cuts it: last_check_error holds 500 characters,
                # and a lookup's detail may quote the owner's answer at any length.
                "unresolved": _unresolved(
                    lookup, target, current, untouched and asked_at < final_after, final_after
                )[:500],
            }
            if target.status == ReadStatus.OK:
                detail["target_version"] = target.version
                # What an operator weighs: the target holds exactly what this effect writes,
                # one version on — the owner may have executed it and lost its key.
                detail["holds_this_value"] = same_value(target.value, effect.resulting_value)
            next_check_at = timezone.now() + timedelta(seconds=delay)
            if asked_at < final_after:
                # Asked again as soon as the owner's answer is final, if the backoff is later;
                # once it is, the backoff alone (else every sweep asked again, for ever).
                next_check_at = min(next_check_at, final_after + timedelta(seconds=1))
            Effect.objects.filter(pk=effect.pk, status=EffectStatus.UNKNOWN).update(
                resolution_attempts=attempt,
                next_check_at=next_check_at,
                last_check_error=detail["unresolved"],
                last_check_error_at=timezone.now(),
            )
            effect_event(effect, "resolution_attempt", detail)
        effect.refresh_from_db()
    return effect


def _unresolved(
    lookup: Any, target: Any, current: bool, too_early: bool, final_after: datetime
) -> str:
    """Why neither the owner's ledger nor the target settled it (shown on the effect page)."""
    if lookup.outcome == LookupOutcome.UNAVAILABLE:
        return (
            f"owner's ledger unavailable: {lookup.detail}"
            if lookup.detail
            else ("owner's ledger unavailable")
        )
    if too_early:
        return (
            "ledger has no key and the target is unchanged, but the owner may still execute "
            f"it until {rfc3339(final_after)} (its execution bound)"
        )
    if target.status != ReadStatus.OK:
        return f"ledger has no key and the target could not be read ({target.status})"
    if not current and target.observed_at is None:
        return "ledger has no key and the owner's view vouches for no time (no observed_at)"
    if not current:
        return (
            "ledger has no key and the owner answered from a view older than the command "
            f"({rfc3339(target.observed_at)})"
        )
    return "ledger has no key but the target changed since"


def effect_resolve_manually(
    *,
    idempotency_key: str,
    outcome: str,
    reason: str,
    actor: Any,
    request_id: str = "",
    confirmed_by_owner: bool = False,
) -> Effect:
    """An operator's verdict on an unknown (or failed-postcondition) effect, as evidence.
    `confirmed_by_owner`: the owner's people confirmed a command still within its execution
    bound will never run (otherwise "it did not happen" waits for the bound to pass)."""
    if outcome not in ("succeeded", "not_executed"):
        raise ValidationFailed("outcome must be succeeded or not_executed", code="invalid_outcome")
    if says_nothing(reason):
        raise ValidationFailed("a manual resolution needs a reason", code="reason_required")
    with transaction.atomic():
        found = Effect.objects.filter(idempotency_key=idempotency_key).values_list("pk", flat=True)
        if not found:
            raise NotFound(f"no effect {idempotency_key}", code="effect_not_found")
        effect = effect_locked(found[0])
        if effect.status not in RESOLVABLE:
            raise Conflict(
                f"{idempotency_key} is {effect.status}; only unknown or postcondition_failed "
                "effects are resolved by hand",
                code="not_resolvable",
            )
        if outcome == "not_executed" and not confirmed_by_owner:
            _refuse_within_execution_bound(effect)
        before = effect.status
        # "Succeeded" is a person's word, not proof: the effect becomes `accepted` (docs/api.md:
        # unknown → accepted) and a readback checks the target like any other.
        new_status = EffectStatus.ACCEPTED if outcome == "succeeded" else EffectStatus.NOT_EXECUTED
        entry = evidence_append(
            **resolution_observed(effect, outcome),
            source=f"operator:{getattr(actor, 'username', 'unknown')}",
            observed_at=timezone.now(),
            note=f"manual resolution: {reason}",
        )
        accepted = new_status == EffectStatus.ACCEPTED
        now = timezone.now()
        Effect.objects.filter(pk=effect.pk, status=before).update(
            status=new_status,
            outcome={**effect.outcome, "resolution": outcome, "reason": reason},
            outcome_at=now,
            # Without a receipt, the least version the command could have produced.
            resulting_version=effect.resulting_version or effect.expected_version + 1,
            next_check_at=now + timedelta(seconds=READBACK_RECHECK_SECONDS) if accepted else None,
        )
        if accepted:
            from reconcile_app.tasks import effect_readback_task

            enqueue_on_commit(effect_readback_task, effect.pk)
        said: dict[str, Any] = {"outcome": outcome, "reason": reason}
        if confirmed_by_owner:
            said["confirmed_by_owner"] = True
        effect_event(
            effect,
            "manual_resolution",
            said,
            evidence_id=entry.evidence_id,
            actor=getattr(actor, "username", ""),
        )
        audit_record(
            actor=actor,
            action="effect.resolve",
            object_kind="effect",
            object_ref=idempotency_key,
            reason=reason,
            request_id=request_id,
            before={"status": before},
            after={"status": new_status, **{k: v for k, v in said.items() if k != "reason"}},
        )
        effect.refresh_from_db()
    return effect


def _refuse_within_execution_bound(effect: Effect) -> None:
    """An unknown outcome whose owner may still run the command is not yet "did not happen":
    recorded so, the agent would decide and commit again under a new key, and the owner could
    then run both (live, an owner took 4-6 s to commit a command already recorded as not
    executed). The worker concludes it once the bound passes; or the owner confirms."""
    now = timezone.now()
    until = may_still_execute_until(effect, now)
    if until is None:
        return
    raise Conflict(
        f"{effect.idempotency_key}'s owner may still run it until {rfc3339(until)} (its "
        "execution bound): resolve not_executed after that, or, when the owner confirmed it "
        "will never run, resolve this effect alone saying so (confirmed_by_owner)",
        code="owner_may_still_execute",
        retry_after=max(1, int((until - now).total_seconds() + 0.999)),
        may_still_execute_until=rfc3339(until),
    )


def effect_request_check(*, idempotency_key: str, actor: Any, request_id: str = "") -> Effect:
    """Queue a readback (accepted / postcondition_failed) or a resolution (unknown) now."""
    from reconcile_app.tasks import effect_readback_task, effect_resolve_task

    effect = Effect.objects.filter(idempotency_key=idempotency_key).first()
    if effect is None:
        raise NotFound(f"no effect {idempotency_key}", code="effect_not_found")
    if effect.status in READBACK_STATUSES:
        task, check = effect_readback_task, "readback"
    elif effect.status == EffectStatus.UNKNOWN:
        task, check = effect_resolve_task, "resolution"
    else:
        raise Conflict(
            f"{idempotency_key} is {effect.status}: there is nothing to read back or resolve",
            code="nothing_to_check",
        )
    with transaction.atomic():
        # What was asked for, in the operators' words (not the Celery task's dotted name).
        effect_event(
            effect, "check_requested", {"check": check}, actor=getattr(actor, "username", "")
        )
        audit_record(
            actor=actor,
            action="effect.readback",
            object_kind="effect",
            object_ref=idempotency_key,
            request_id=request_id,
            # Queuing a check changes no status: the status it was asked in, and what was queued.
            before={"status": effect.status},
            after={"status": effect.status, "queued": check},
        )
        # Queuing is the whole request: refused, nothing of it stays (the task reads the
        # effect's row, which this transaction does not change).
        enqueue_or_refuse(task, effect.pk)
    return effect
