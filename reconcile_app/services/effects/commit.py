"""Commit effects against the version a snapshot read (DESIGN.md step 7).

The order is the point: validate → record durably → mark sent → send (no transaction held)
→ record the owner's answer. A request is never sent before it is recorded, and an answer
that never came is `unknown`, never a guess.

A retry with the same key is answered from the record — except after `owner_unavailable`:
that request never reached the owner (a refused connection, or the owner's own 503), so
nothing was executed and the retry is a new attempt, gate and all, under the same key
(which the owner's idempotency still guards). Replaying the 503 would have left the key
useless for good; an agent that keeps its key across retries, as it should, could never act.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from functools import partial
from typing import Any

from django.db import IntegrityError, InterfaceError, OperationalError, transaction
from django.utils import timezone

from reconcile_app.canonical import content_hash
from reconcile_app.choices import EffectStatus
from reconcile_app.epochs import epochs_seen
from reconcile_app.errors import DomainError, NotFound, ValidationFailed
from reconcile_app.limits import identifier_check
from reconcile_app.models import DecisionSnapshot, Effect, Principal
from reconcile_app.services.effects.gate import (
    ActionTarget,
    Authorisation,
    action_target,
    authorisation_held,
    effect_authorise,
    evidence_held,
    snapshot_sources_check,
)
from reconcile_app.services.effects.resolution import effect_resolve_unknown
from reconcile_app.services.effects.state import (
    IN_FLIGHT_RETRY_AFTER_SECONDS,
    RESOLUTION_BACKOFF,
    effect_accept,
    effect_event,
    effect_mark_sent,
    effect_reload,
    never_reached_owner,
    recorded_then_unavailable,
    request_unanswered_entry,
)
from reconcile_app.services.enqueue import enqueue_on_commit
from reconcile_app.services.provenance import effect_lineage
from reconcile_app.services.quarantine import source_check
from reconcile_app.sources import ApplyOutcome, EffectCommand, adapter_for
from reconcile_app.sources.owner_answers import VERSION_MOST, receipt_problem


@dataclass(frozen=True)
class CommitResult:
    effect: Effect
    replayed: bool


# A version in If-Match: ASCII digits, quoted as the ETag was (a bare number and a weak
# validator are taken too). int() alone also took "1_0" as 10, " 1" and other scripts' digits.
# Any version an owner's read may carry (to VERSION_MOST, 19 digits) is one: a snapshot
# offers the version it read as its If-Match. All but the last: a command applied at a
# version yields the next one, and no next one fits in 64 bits after VERSION_MOST (a manual
# resolution recording "at least expected + 1" answered 500, bigint out of range).
_IF_MATCH_VERSION = re.compile(r'(?:W/)?("?)([0-9]{1,19})\1')


def parse_if_match(raw: str | None) -> int:
    if raw is None or not raw.strip():
        raise DomainError(
            'If-Match: "<version>" is required (the version the snapshot read)',
            code="precondition_required",
            status=428,
            title="Precondition required",
        )
    found = _IF_MATCH_VERSION.fullmatch(raw.strip())
    if found is None or int(found.group(2)) >= VERSION_MOST:
        raise ValidationFailed(
            'If-Match must be a quoted version, e.g. "42"', code="invalid_if_match"
        )
    return int(found.group(2))


def check_idempotency_key(raw: str | None) -> str:
    if raw is None or not raw.strip():
        raise ValidationFailed("Idempotency-Key header is required", code="idempotency_key_missing")
    key = identifier_check(raw.strip(), "Idempotency-Key")
    # The key travels on in an HTTP header to the owner, and headers are bytes: a server
    # reads non-ASCII ones as Latin-1 (UTF-8 "café" arrived as "cafÃ©", stored so, and could
    # not be found under its own name), and an HTTP client refuses to send them.
    if not key.isascii():
        raise ValidationFailed(
            "Idempotency-Key must be ASCII: it is sent on to the owner in an HTTP header",
            code="invalid_identifier",
            name="Idempotency-Key",
        )
    return key


def effect_fingerprint(
    *,
    principal: Principal,
    snapshot_id: str,
    action: str,
    subject: str,
    field: str,
    resulting_value: Any,
    expected_version: int,
) -> str:
    """Binds a key to the intended request, not only to its name (seed 000)."""
    return content_hash(
        {
            "principal": principal.name,
            "snapshot": snapshot_id,
            "action": action,
            "target": {"subject": subject, "field": field},
            "resulting_value": resulting_value,
            "expected_version": expected_version,
        }
    )


def _existing(key: str, fingerprint: str) -> CommitResult:
    effect = Effect.objects.select_related("snapshot").get(idempotency_key=key)
    if effect.fingerprint != fingerprint:
        raise DomainError(
            f"Idempotency-Key {key} was used for a different request",
            code="idempotency_key_reused",
            status=422,
            title="Idempotency key reused",
        )
    if effect.status in (EffectStatus.RECORDED, EffectStatus.SENT):
        raise DomainError(
            f"a request with Idempotency-Key {key} is still in flight",
            code="idempotency_key_in_use",
            status=409,
            title="Conflict",
            retry_after=IN_FLIGHT_RETRY_AFTER_SECONDS,
        )
    return CommitResult(effect=effect, replayed=True)


def effect_commit(
    *,
    principal: Principal,
    idempotency_key: str | None,
    if_match: str | None,
    snapshot_id: str,
    action: str,
    resulting_value: Any,
    compensates: Effect | None = None,
    granted_actions: frozenset[str] = frozenset(),
    on_recorded: Callable[[Effect], None] | None = None,
) -> CommitResult:
    """`compensates`, `granted_actions` and `on_recorded` are for an operator's compensation
    (compensation.py): the effect it undoes, the action the operator role grants, and its
    audit, written in the transaction that records the effect so both land or neither."""
    key = check_idempotency_key(idempotency_key)
    expected = parse_if_match(if_match)
    snapshot = (
        DecisionSnapshot.objects.select_related("decision_receipt", "contract")
        .filter(snapshot_id=snapshot_id)
        .first()
    )
    target = action_target(snapshot, action)
    fingerprint = effect_fingerprint(
        principal=principal,
        snapshot_id=snapshot_id,
        action=action,
        subject=snapshot.subject if snapshot else "",
        field=target.field,
        resulting_value=resulting_value,
        expected_version=expected,
    )
    # A retry is answered from the record, before the (possibly expired) snapshot is checked
    # again: the original outcome stands whatever happened since. Only a request that never
    # reached the owner has no outcome to stand by: it is sent again, through the gate.
    if Effect.objects.filter(idempotency_key=key).exists():
        existing = _existing(key, fingerprint)
        if never_reached_owner(existing.effect):
            return _send_again(existing.effect, principal=principal, target=target)
        return _resolve_on_retry(existing)
    if snapshot is None:
        raise NotFound(f"no snapshot {snapshot_id}", code="snapshot_not_found")
    gate = partial(
        _authorise,
        principal=principal,
        snapshot=snapshot,
        action=action,
        target=target,
        resulting_value=resulting_value,
        expected=expected,
        granted_actions=granted_actions,
    )
    seen = epochs_seen()
    authorised = gate()
    try:
        with transaction.atomic():
            authorised = authorisation_held(seen, authorised, gate, snapshot)
            effect = Effect.objects.create(
                idempotency_key=key,
                fingerprint=fingerprint,
                principal=principal,
                snapshot=snapshot,
                decision=snapshot.decision_receipt,
                source=authorised.source,
                escalation=authorised.escalation,
                approved_by=authorised.approved_by,
                compensates=compensates,
                action=action,
                subject=snapshot.subject,
                field=target.field,
                resulting_value=resulting_value,
                expected_version=expected,
                status=EffectStatus.RECORDED,
                created_at=timezone.now(),
            )
            recorded: dict[str, Any] = {"expected_version": expected}
            if authorised.escalation is not None:
                recorded["escalation_id"] = authorised.escalation.escalation_id
                recorded["approved_by"] = authorised.approved_by
            if compensates is not None:
                recorded["compensates"] = compensates.idempotency_key
            effect_event(effect, "recorded", recorded)
            if on_recorded is not None:
                on_recorded(effect)
            effect_lineage(
                decision_id=snapshot.decision_receipt.decision_id,
                idempotency_key=key,
                action=action,
            )
            evidence_held(snapshot)
    except IntegrityError:
        # A concurrent request with the same key was recorded first.
        return _resolve_on_retry(_existing(key, fingerprint))
    return _sent(effect)


def _sent(effect: Effect, *, reload: bool = False) -> CommitResult:
    """Send a recorded effect. From here on a database failure is no "nothing was written":
    the record stands and the command may have reached the owner."""
    try:
        if reload:
            effect_reload(effect)
        return CommitResult(effect=_send(effect), replayed=False)
    except (OperationalError, InterfaceError) as exc:
        raise recorded_then_unavailable(effect.idempotency_key) from exc


def _authorise(
    *,
    principal: Principal,
    snapshot: DecisionSnapshot,
    action: str,
    target: ActionTarget,
    resulting_value: Any,
    expected: int,
    granted_actions: frozenset[str] = frozenset(),
) -> Authorisation:
    authorised = effect_authorise(
        principal=principal,
        snapshot=snapshot,
        action=action,
        target=target,
        resulting_value=resulting_value,
        expected=expected,
        granted_actions=granted_actions,
    )
    source_check(authorised.source.name)
    snapshot_sources_check(snapshot)
    return authorised


def _send_again(effect: Effect, *, principal: Principal, target: ActionTarget) -> CommitResult:
    """rejected (never reached the owner) → recorded → sent: the same command once more.

    The snapshot must still authorise it, exactly as for a first attempt (its window may
    have closed, its contract been superseded, a source quarantined since). Of two retries
    racing, one moves the effect; the other finds it in flight (409) or settled.
    """
    gate = partial(
        _authorise,
        principal=principal,
        snapshot=effect.snapshot,
        action=effect.action,
        target=target,
        resulting_value=effect.resulting_value,
        expected=effect.expected_version,
    )
    seen = epochs_seen()
    authorised = gate()
    with transaction.atomic():
        authorisation_held(seen, authorised, gate, effect.snapshot)
        moved = Effect.objects.filter(pk=effect.pk, status=EffectStatus.REJECTED).update(
            status=EffectStatus.RECORDED, outcome={}, outcome_at=None
        )
        if moved:
            effect_event(effect, "retried", {"previous": effect.outcome})
        evidence_held(effect.snapshot)
    if not moved:
        return _resolve_on_retry(_existing(effect.idempotency_key, effect.fingerprint))
    return _sent(effect, reload=True)


def _send(effect: Effect) -> Effect:
    if not effect_mark_sent(effect):
        # No longer ours to send: answered from the record, as a retry is.
        effect_reload(effect)
        return _resolve_on_retry(_existing(effect.idempotency_key, effect.fingerprint)).effect
    result = adapter_for(effect.source).apply(
        EffectCommand(
            idempotency_key=effect.idempotency_key,
            subject=effect.subject,
            field=effect.field,
            action=effect.action,
            resulting_value=effect.resulting_value,
            expected_version=effect.expected_version,
        )
    )
    if result.outcome == ApplyOutcome.ACCEPTED and (
        problem := receipt_problem(
            result.receipt,
            idempotency_key=effect.idempotency_key,
            subject=effect.subject,
            field=effect.field,
            expected_version=effect.expected_version,
        )
    ):
        # An adapter's "accepted" is taken only with proof of this command (the `http` one
        # checks its owner's receipts itself; any other adapter's are checked here).
        return _mark_unknown(effect, problem, code="receipt_mismatch")
    if result.outcome == ApplyOutcome.ACCEPTED:
        return effect_accept(
            effect_id=effect.pk, receipt=result.receipt or {}, via="receipt", known=effect
        )
    if result.outcome == ApplyOutcome.REJECTED:
        return _reject(effect, result.code, result.expected, result.found, result.detail)
    return _mark_unknown(effect, result.detail, code=result.code or "timeout")


def _reject(
    effect: Effect, code: str, expected: int | None, found: int | None, detail: str
) -> Effect:
    with transaction.atomic():
        # Not moved: the sweep gave the sender up meanwhile (unknown, perhaps settled since).
        if Effect.objects.filter(pk=effect.pk, status=EffectStatus.SENT).update(
            status=EffectStatus.REJECTED,
            outcome={"code": code, "expected": expected, "found": found, "detail": detail},
            outcome_at=timezone.now(),
        ):
            effect_event(effect, "rejected", {"code": code, "expected": expected, "found": found})
    effect_reload(effect)
    return effect


def _mark_unknown(effect: Effect, detail: str, *, code: str = "timeout") -> Effect:
    """sent → unknown: the request left, and no answer proves what became of it (a timeout,
    a gateway error, or a receipt that is not for this request: `code` says which)."""
    from reconcile_app.tasks import effect_resolve_task

    with transaction.atomic():
        # Not moved: the sweep gave the sender up meanwhile (unknown, perhaps settled since).
        if Effect.objects.filter(pk=effect.pk, status=EffectStatus.SENT).update(
            status=EffectStatus.UNKNOWN,
            outcome={"code": code, "detail": detail},
            outcome_at=timezone.now(),
            next_check_at=timezone.now() + timedelta(seconds=RESOLUTION_BACKOFF[0]),
        ):
            entry = request_unanswered_entry(effect, note="request sent; response not received")
            effect_event(
                effect, "timeout", {"code": code, "detail": detail}, evidence_id=entry.evidence_id
            )
            enqueue_on_commit(effect_resolve_task, effect.pk)
        # Read back before the commit: the answer to this request is "unknown", whatever
        # the resolution queued above finds later.
        effect_reload(effect)
    return effect


def _resolve_on_retry(result: CommitResult) -> CommitResult:
    """A retry of an unknown outcome asks the owner's ledger first (never re-sends blindly)."""
    if result.effect.status != EffectStatus.UNKNOWN:
        return result
    return CommitResult(effect=effect_resolve_unknown(effect_id=result.effect.pk), replayed=True)
