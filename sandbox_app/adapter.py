"""Adapter for the built-in sandbox owner system (in-process, same contract as `http`)."""

from __future__ import annotations

from datetime import datetime
from typing import cast

from reconcile_app.choices import ReadStatus
from reconcile_app.errors import Conflict, NotFound, ValidationFailed
from reconcile_app.reducers import Event
from reconcile_app.sources import (
    ApplyOutcome,
    ApplyResult,
    AuthorityResult,
    EffectCommand,
    EventsResult,
    LookupOutcome,
    LookupResult,
    ReadResult,
    SourceAdapter,
)
from reconcile_app.sources.owner_client import owner_timeout
from sandbox_app.services import (
    SandboxNoAnswer,
    SandboxRead,
    SandboxTimeout,
    SandboxUnavailable,
    sandbox_authority_read,
    sandbox_effect_apply,
    sandbox_effect_lookup,
    sandbox_events_read,
    sandbox_record_read,
    sandbox_records_read,
)


def _read_failed(problem: SandboxUnavailable | SandboxNoAnswer | NotFound) -> ReadResult:
    if isinstance(problem, SandboxNoAnswer):
        return ReadResult.failed(ReadStatus.TIMEOUT, str(problem))
    return ReadResult.failed(ReadStatus.UNAVAILABLE, problem.detail)


def _answer(record: SandboxRead) -> ReadResult:
    return ReadResult(
        status=ReadStatus.OK,
        value=record.value,
        version=record.version,
        valid_from=record.valid_from,
        recorded_at=record.recorded_at,
        observed_at=record.observed_at,
    )


class SandboxAdapter(SourceAdapter):
    """Waits on the sandbox no longer than on an owner reached over HTTP: the source's
    `timeout_ms` (else the deployment's), past which a slow owner's call is a timeout."""

    # The sandbox executes a command inside the call or never: a latency past the caller's
    # deadline gives up before doing anything (sandbox_app/services/faults.py).
    default_execution_bound_seconds = 0

    def _within(self) -> float:
        return owner_timeout((self.source.options or {}).get("timeout_ms"))

    def read(self, subject: str, field: str) -> ReadResult:
        try:
            record = sandbox_record_read(
                source=self.source.name, subject=subject, field=field, within=self._within()
            )
        except (SandboxUnavailable, SandboxNoAnswer, NotFound) as exc:
            return _read_failed(exc)
        return _answer(record)

    @classmethod
    def read_batch(cls, reads: list[tuple[SourceAdapter, str, str]]) -> list[ReadResult]:
        # The sandbox holds every sandbox source: one round trip answers them all.
        answers = sandbox_records_read(
            [(adapter.source.name, subject, field) for adapter, subject, field in reads],
            within={
                adapter.source.name: cast(SandboxAdapter, adapter)._within()
                for adapter, _, _ in reads
            },
        )
        return [
            _answer(answer) if isinstance(answer, SandboxRead) else _read_failed(answer)
            for answer in answers
        ]

    def authority(self, fact_key: str, as_of: datetime | None = None) -> AuthorityResult:
        # The sandbox keeps its authority history, so an as_of question has an answer.
        try:
            found = sandbox_authority_read(source=self.source.name, fact_key=fact_key, as_of=as_of)
        except NotFound as exc:  # the owner's answer: none is registered (by then)
            return AuthorityResult.unregistered(exc.detail, as_of=as_of)
        except (SandboxUnavailable, ValidationFailed) as exc:
            return AuthorityResult(status=ReadStatus.UNAVAILABLE, detail=exc.detail, as_of=as_of)
        return AuthorityResult(
            status=ReadStatus.OK,
            owner=found.owner,
            source_revision=found.source_revision,
            as_of=as_of,
        )

    def apply(self, command: EffectCommand) -> ApplyResult:
        if self.source.mode == "event_sourced":
            return ApplyResult(
                outcome=ApplyOutcome.REJECTED,
                code="owner_refused",
                detail=f"{self.source.name} is event-sourced: changes are appended as events",
            )
        try:
            receipt = sandbox_effect_apply(
                source=self.source.name,
                idempotency_key=command.idempotency_key,
                subject=command.subject,
                field=command.field,
                action=command.action,
                resulting_value=command.resulting_value,
                expected_version=command.expected_version,
                within=self._within(),
            )
        except (SandboxTimeout, SandboxNoAnswer) as exc:
            return ApplyResult(outcome=ApplyOutcome.UNKNOWN, code="timeout", detail=str(exc))
        except SandboxUnavailable as exc:
            return ApplyResult(
                outcome=ApplyOutcome.REJECTED, code="owner_unavailable", detail=exc.detail
            )
        except Conflict as exc:
            return ApplyResult(
                outcome=ApplyOutcome.REJECTED,
                code=exc.code,
                expected=exc.extra.get("expected"),
                found=exc.extra.get("found"),
                detail=exc.detail,
            )
        return ApplyResult(outcome=ApplyOutcome.ACCEPTED, receipt=receipt)

    def lookup_effect(self, idempotency_key: str) -> LookupResult:
        try:
            receipt = sandbox_effect_lookup(
                source=self.source.name, idempotency_key=idempotency_key
            )
        except SandboxUnavailable as exc:
            return LookupResult(outcome=LookupOutcome.UNAVAILABLE, detail=exc.detail)
        except NotFound as exc:
            return LookupResult(outcome=LookupOutcome.NOT_FOUND, detail=exc.detail)
        return LookupResult(outcome=LookupOutcome.FOUND, receipt=receipt)

    def events(
        self, subject: str, after: int | None = None, recorded_before: datetime | None = None
    ) -> EventsResult:
        try:
            delivered = sandbox_events_read(
                source=self.source.name,
                subject=subject,
                after=after,
                recorded_before=recorded_before,
                within=self._within(),
            )
        except SandboxUnavailable as exc:
            return EventsResult(status=ReadStatus.UNAVAILABLE, detail=exc.detail)
        except SandboxNoAnswer as exc:
            return EventsResult(status=ReadStatus.TIMEOUT, detail=str(exc))
        return EventsResult(
            status=ReadStatus.OK,
            events=[
                Event(
                    event_id=item.event_id,
                    seq=item.seq,
                    type=item.type,
                    subject=item.subject,
                    field=item.field,
                    value=item.value,
                    valid_from=item.valid_from,
                    recorded_at=item.recorded_at,
                )
                for item in delivered.events
            ],
            observed_at=delivered.observed_at,
        )
