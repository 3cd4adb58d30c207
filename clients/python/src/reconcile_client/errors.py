"""Every problem+json answer as an exception an agent can branch on.

Reconcile answers every refusal as RFC 9457 problem details with a stable `code`. The client
raises `ReconcileError` for each of them, or the subclass of its family: first the class
registered for the exact `code` (`VersionChanged` for `version_changed`), otherwise the class
of its HTTP status (`PreconditionFailed` for any other 412), otherwise `ReconcileError`. A
new code the server adds later therefore still lands in the right family.

Families (status), what an agent does, and the codes with a class of their own:
- `NotAuthorised` (401): fix the key.
- `Forbidden` (403): do not act, the decision or the capability is not there.
  `DecisionNotAllowed`, `EscalationPending`, `EscalationRejected`, `ApprovedStateMoved`
  (`approved_snapshot_id`, `field`), `CapabilityMissing`, `EffectNotBound`,
  `ValueNotPermitted`, `PeopleOnly`.
- `NotFound` (404): the thing is not there, or not yours. `NoCurrentRecord`.
- `Conflict` (409): reconcile again. `SnapshotTainted`, `ContractSuperseded`,
  `AuthorityAmbiguous` (`escalation_id`). Two are not "reconcile again":
  `IdempotencyKeyInUse` (the key is in flight: ask `effect(key)` later, never commit the
  same command under another key) and `OwnerRefused` (the owner refuses the command itself:
  neither retrying nor reconciling changes that).
- `PreconditionFailed` (412): the state moved, reconcile again. `VersionChanged`
  (`expected`, `found`), `SnapshotVersionMismatch`, `SnapshotExpired`.
- `ValidationError` (400, 413, 422, 428): the request is wrong, fix it.
  `IdempotencyKeyReused`, `ContractVersionInactive` (`active_version`).
- `Locked` (423): quarantined or frozen, people lift it. `SourceQuarantined`,
  `MemoryClassQuarantined`, `FactKeyFrozen`.
- `RateLimited` (429): slow down (`retry_after`).
- `Unavailable` (503): try later (`retry_after` when given). `OwnerUnavailable` (a commit:
  retry with the same `idempotency_key`), `CurrentAuthorityUnavailable`.
- `ServerError` (any other 5xx): try later.

No answer at all is not a problem answer: `TransportError` (status None). For a commit, no
answer after every attempt with the same key is `CommitOutcomeUnknown`: the effect may or
may not have happened, and only `effect(key)` / `wait` with that key can tell.

Every problem a commit raises carries the commit's `idempotency_key` (None elsewhere): the
key to retry (`OwnerUnavailable`) or to ask about (`CommitOutcomeUnknown`), never to replace
for the same command. (`IdempotencyKeyReused` is the exception: that key already names
another command, so this one needs a new key.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class ReconcileError(Exception):
    """A problem+json answer (or, in the `TransportError` branch, no answer at all)."""

    # The Idempotency-Key of the commit that raised it; None for any other request.
    idempotency_key: str | None = None

    def __init__(
        self,
        *,
        status: int | None,
        code: str,
        detail: str = "",
        title: str = "",
        body: Mapping[str, Any] | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{status or 'no answer'} {code}: {detail}" if detail else code)
        self.status = status
        self.code = code
        self.detail = detail
        self.title = title
        self.body: Mapping[str, Any] = body if body is not None else {}
        # Seconds the server asked us to wait (Retry-After), when it said.
        self.retry_after = retry_after

    def as_dict(self) -> dict[str, Any]:
        """The problem as the server sent it, with status, code and detail always present,
        a commit's `idempotency_key`, and `retry_after` when the server said when to try
        again (a header, which the body does not repeat: the MCP server's tool errors are
        this dict, and a model reads no headers)."""
        found = {
            **self.body,
            "status": self.status,
            "code": self.code,
            "detail": self.detail,
            "title": self.title,
        }
        if self.idempotency_key is not None:
            found["idempotency_key"] = self.idempotency_key
        if self.retry_after is not None:
            found["retry_after"] = self.retry_after
        return found


class TransportError(ReconcileError):
    """No answer: the connection failed or timed out. Nothing is known of the outcome."""


class CommitOutcomeUnknown(TransportError):
    """A commit got no answer after every attempt with its one key: check `effect(key)`."""

    idempotency_key: str  # always known here: the key to ask about

    def __init__(self, *, idempotency_key: str, attempts: int, detail: str) -> None:
        super().__init__(
            status=None,
            code="commit_outcome_unknown",
            detail=(
                f"no answer after {attempts} attempts with Idempotency-Key {idempotency_key} "
                f"({detail}); ask effect({idempotency_key!r}) and never commit it under "
                "another key"
            ),
            body={"idempotency_key": idempotency_key, "attempts": attempts},
        )
        self.idempotency_key = idempotency_key
        self.attempts = attempts


class NotAuthorised(ReconcileError):
    """401: no key, or a key the server does not accept."""


class Forbidden(ReconcileError):
    """403: the caller may not do this."""


class DecisionNotAllowed(Forbidden):
    """The snapshot does not allow this action (deny, refuse, not permitted, not yours)."""


class _OfAnEscalation(Forbidden):
    """A refusal that names the escalation it is about (`escalation_id`)."""

    @property
    def escalation_id(self) -> str | None:
        return text_or_none(self.body.get("escalation_id"))


class EscalationPending(_OfAnEscalation):
    """An `escalate` snapshot waits on a reviewer: poll `escalation(escalation_id)`."""


class EscalationRejected(_OfAnEscalation):
    """The reviewer rejected the escalation: the snapshot authorises nothing. (Not a kind of
    `EscalationPending`: an agent that waits on a pending one must not wait on this.)"""


class ApprovedStateMoved(_OfAnEscalation):
    """This snapshot joined an approved escalation but read a state the reviewer never saw
    (`field`: the first read that differs). The approval authorises `approved_snapshot_id`,
    the snapshot the reviewer saw, while its commit window is open; once it has closed,
    reconciling again asks for a new review."""

    @property
    def approved_snapshot_id(self) -> str | None:
        return text_or_none(self.body.get("approved_snapshot_id"))

    @property
    def field(self) -> str | None:
        return text_or_none(self.body.get("field"))


class CapabilityMissing(Forbidden):
    """The principal holds no capability for this decision class and action."""


class EffectNotBound(Forbidden):
    """The snapshot bound another action or value (`proposed_value`)."""


class ValueNotPermitted(Forbidden):
    """The action may not write this value (`permitted_values`)."""

    @property
    def permitted_values(self) -> list[Any] | None:
        value = self.body.get("permitted_values")
        return list(value) if isinstance(value, list) else None


class PeopleOnly(Forbidden):
    """Agents may not read this (lineage, audit, the sandbox...)."""


class NotFound(ReconcileError):
    """404: no such thing, or another principal's."""


class NoCurrentRecord(NotFound):
    """No fact record is current for the owner's revision on that date."""


class Conflict(ReconcileError):
    """409: the request collides with the current state of things."""


class SnapshotTainted(Conflict):
    """Evidence the snapshot used was revoked or superseded since: reconcile again."""


class ContractSuperseded(Conflict):
    """The snapshot's contract version is no longer active: reconcile again."""


class IdempotencyKeyInUse(Conflict):
    """A request with this key is still in flight: ask again with the same key later."""


class AuthorityAmbiguous(Conflict):
    """More than one fact record is current: an escalation is open (`escalation_id`)."""

    @property
    def escalation_id(self) -> str | None:
        return text_or_none(self.body.get("escalation_id"))


class OwnerRefused(Conflict):
    """The owner system refused the command itself (an event-sourced field, a rule of its
    own): sending it again, or reconciling again, will not change the answer."""


class PreconditionFailed(ReconcileError):
    """412: what the snapshot read is no longer what holds."""

    @property
    def expected(self) -> int | None:
        return _int_or_none(self.body.get("expected"))

    @property
    def found(self) -> int | None:
        return _int_or_none(self.body.get("found"))


class VersionChanged(PreconditionFailed):
    """The owner's record moved on between the read and the commit (`expected`, `found`)."""

    @property
    def effect(self) -> Mapping[str, Any] | None:
        """The rejected effect, as recorded (its key, status `rejected` and outcome)."""
        value = self.body.get("effect")
        return value if isinstance(value, Mapping) else None


class SnapshotVersionMismatch(PreconditionFailed):
    """If-Match was not the version the snapshot read."""


class SnapshotExpired(PreconditionFailed):
    """The snapshot's commit window has closed: reconcile again."""


class ValidationError(ReconcileError):
    """400, 413, 422 or 428: the request itself is wrong; sending it again will not help."""


class IdempotencyKeyReused(ValidationError):
    """The key was used for a different request: a new intent needs a new key."""


class ContractVersionInactive(ValidationError):
    """`contract_version` is not the class's active version (`active_version`)."""

    @property
    def active_version(self) -> str | None:
        return text_or_none(self.body.get("active_version"))


class Locked(ReconcileError):
    """423: a quarantine or a freeze holds this; people lift it."""


class SourceQuarantined(Locked):
    """The owner system is quarantined: commits against it wait for operators."""


class MemoryClassQuarantined(Locked):
    """The memory class is quarantined."""


class FactKeyFrozen(Locked):
    """An open escalation freezes writes to this fact key."""


class RateLimited(ReconcileError):
    """429: too many requests (`retry_after`)."""


class Unavailable(ReconcileError):
    """503: a dependency could not answer now."""


class OwnerUnavailable(Unavailable):
    """The owner system did not take the command (nothing was executed)."""


class CurrentAuthorityUnavailable(Unavailable):
    """The owner's system of record could not be asked who owns the fact."""


class ServerError(ReconcileError):
    """Another 5xx."""


BY_CODE: dict[str, type[ReconcileError]] = {
    "not_authenticated": NotAuthorised,
    "authentication_failed": NotAuthorised,
    "decision_not_allowed": DecisionNotAllowed,
    "escalation_pending": EscalationPending,
    "escalation_rejected": EscalationRejected,
    "approved_state_moved": ApprovedStateMoved,
    "capability_missing": CapabilityMissing,
    "effect_not_bound": EffectNotBound,
    "value_not_permitted": ValueNotPermitted,
    "people_only": PeopleOnly,
    "no_current_record": NoCurrentRecord,
    "snapshot_tainted": SnapshotTainted,
    "contract_superseded": ContractSuperseded,
    "idempotency_key_in_use": IdempotencyKeyInUse,
    "authority_ambiguous": AuthorityAmbiguous,
    "owner_refused": OwnerRefused,
    "version_changed": VersionChanged,
    "snapshot_version_mismatch": SnapshotVersionMismatch,
    "snapshot_expired": SnapshotExpired,
    "idempotency_key_reused": IdempotencyKeyReused,
    "contract_version_inactive": ContractVersionInactive,
    "source_quarantined": SourceQuarantined,
    "memory_class_quarantined": MemoryClassQuarantined,
    "fact_key_frozen": FactKeyFrozen,
    "owner_unavailable": OwnerUnavailable,
    "current_authority_unavailable": CurrentAuthorityUnavailable,
}

BY_STATUS: dict[int, type[ReconcileError]] = {
    400: ValidationError,
    401: NotAuthorised,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    412: PreconditionFailed,
    413: ValidationError,
    422: ValidationError,
    423: Locked,
    428: ValidationError,
    429: RateLimited,
    503: Unavailable,
}


def error_class(status: int, code: str) -> type[ReconcileError]:
    """The most specific class for an answer: by code, else by status, else by range."""
    found = BY_CODE.get(code)
    if found is not None:
        return found
    if status in BY_STATUS:
        return BY_STATUS[status]
    if status >= 500:
        return ServerError
    return ValidationError if 400 <= status < 500 else ReconcileError


def text_or_none(value: Any) -> str | None:
    """A JSON property as text, None when absent (shared with the models: errors import
    nothing of the client's, so the models read it from here)."""
    return str(value) if value is not None else None


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
