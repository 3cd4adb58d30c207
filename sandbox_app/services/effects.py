"""The sandbox owner's side of a commit: compare-and-set, its own idempotency ledger."""

from __future__ import annotations

import secrets
from typing import Any

from django.db import transaction
from django.utils import timezone

from reconcile_app.canonical import content_hash, rfc3339
from reconcile_app.errors import Conflict, NotFound
from sandbox_app.choices import FaultKind
from sandbox_app.models import (
    SandboxEffect,
    SandboxFault,
    SandboxRecord,
)
from sandbox_app.services.faults import (
    SandboxUnavailable,
    fault_fires,
    sandbox_audit,
    slow_down,
)


class SandboxTimeout(Exception):
    """The command committed, then the answer was lost (the `timeout_after_commit` fault)."""

    def __init__(self, message: str, seconds: int = 0) -> None:
        super().__init__(message)
        self.seconds = seconds


def _owner_fingerprint(subject: str, field: str, action: str, value: Any, expected: int) -> str:
    return content_hash(
        {"subject": subject, "field": field, "action": action, "value": value, "expected": expected}
    )


def sandbox_effect_apply(
    *,
    source: str,
    idempotency_key: str,
    subject: str,
    field: str,
    action: str,
    resulting_value: Any,
    expected_version: int,
    actor: Any = None,
    request_id: str = "",
    within: float | None = None,
) -> dict[str, Any]:
    """Apply a command with compare-and-set on the record version; at most once per key.

    Returns the receipt (the stored one again for a repeated key). Raises SandboxUnavailable
    or SandboxNoAnswer (a latency past `within` seconds) before doing anything, Conflict 412
    `version_changed` or 422 `idempotency_key_reused`, or SandboxTimeout after committing.
    """
    faults = list(SandboxFault.objects.filter(source=source))
    slow_down(faults, within)
    if fault_fires(faults, FaultKind.UNAVAILABLE):
        raise SandboxUnavailable(f"{source} is unavailable (injected fault)")
    fingerprint = _owner_fingerprint(subject, field, action, resulting_value, expected_version)
    with transaction.atomic():
        prior = (
            SandboxEffect.objects.select_for_update()
            .filter(source=source, idempotency_key=idempotency_key)
            .first()
        )
        if prior is not None:
            if prior.fingerprint != fingerprint:
                raise Conflict(
                    f"idempotency key {idempotency_key} was used for another command",
                    code="idempotency_key_reused",
                    status=422,
                )
            receipt = prior.receipt
        else:
            receipt = _execute(
                source,
                idempotency_key,
                fingerprint,
                subject,
                field,
                action,
                resulting_value,
                expected_version,
                dropped=fault_fires(faults, FaultKind.DROP_POSTCONDITION) is not None,
                remembered=fault_fires(faults, FaultKind.LOSE_DEDUPE_RECORD) is None,
            )
            sandbox_audit(
                actor,
                "sandbox.effect.apply",
                f"{source}/{idempotency_key}",
                request_id,
                {"subject": subject, "field": field, "action": action, "receipt": receipt},
            )
    timeout = fault_fires(faults, FaultKind.TIMEOUT_AFTER_COMMIT)
    if timeout is not None:
        raise SandboxTimeout(
            f"{source} committed {idempotency_key}, then the answer was lost",
            seconds=min(timeout.seconds, 30),
        )
    return receipt


def _execute(
    source: str,
    idempotency_key: str,
    fingerprint: str,
    subject: str,
    field: str,
    action: str,
    resulting_value: Any,
    expected_version: int,
    *,
    dropped: bool,
    remembered: bool = True,
) -> dict[str, Any]:
    now = timezone.now()
    record = SandboxRecord.objects.filter(source=source, subject=subject, field=field).first()
    found = record.version if record else None
    if record is None or record.version != expected_version:
        raise Conflict(
            f"version changed: expected {expected_version}, found {found}",
            code="version_changed",
            status=412,
            expected=expected_version,
            found=found,
        )
    if not dropped:
        # The version check is in the UPDATE itself: no lost update under contention.
        updated = SandboxRecord.objects.filter(pk=record.pk, version=expected_version).update(
            value=resulting_value, version=expected_version + 1, valid_from=now, recorded_at=now
        )
        if not updated:
            found = SandboxRecord.objects.values_list("version", flat=True).get(pk=record.pk)
            raise Conflict(
                f"version changed: expected {expected_version}, found {found}",
                code="version_changed",
                status=412,
                expected=expected_version,
                found=found,
            )
    receipt = {
        "receipt_id": f"rcpt-{secrets.token_hex(6)}",
        "idempotency_key": idempotency_key,
        "subject": subject,
        "field": field,
        "action": action,
        "resulting_value": resulting_value,
        "resulting_version": expected_version + 1,
        "committed_at": rfc3339(now),
    }
    if remembered:
        SandboxEffect.objects.create(
            source=source,
            idempotency_key=idempotency_key,
            fingerprint=fingerprint,
            receipt=receipt,
            applied=not dropped,
        )
    # Forgotten (the `lose_dedupe_record` fault): the record changed, and nothing of the key
    # is kept. A repeat is a new command to this owner — only its If-Match, now stale, stops
    # it — and the owner's ledger answers 404 for the key.
    return receipt


def sandbox_effect_lookup(*, source: str, idempotency_key: str) -> dict[str, Any]:
    """The owner's ledger: the receipt, NotFound if it never executed, or unavailable."""
    faults = list(SandboxFault.objects.filter(source=source))
    if fault_fires(faults, FaultKind.UNAVAILABLE):
        raise SandboxUnavailable(f"{source} is unavailable (injected fault)")
    found = SandboxEffect.objects.filter(source=source, idempotency_key=idempotency_key).first()
    if found is None:
        raise NotFound(f"{source} never executed {idempotency_key}", code="effect_not_found")
    return found.receipt
