"""Adapter for the built-in sandbox owner system (in-process, same contract as `http`)."""

from __future__ import annotations

from reconcile_app.choices import ReadStatus
from reconcile_app.errors import NotFound
from reconcile_app.services.sandbox import (
    SandboxUnavailable,
    sandbox_authority_read,
    sandbox_record_read,
)
from reconcile_app.sources import AuthorityResult, ReadResult, SourceAdapter


class SandboxAdapter(SourceAdapter):
    def read(self, subject: str, field: str) -> ReadResult:
        try:
            record = sandbox_record_read(source=self.source.name, subject=subject, field=field)
        except SandboxUnavailable as exc:
            return ReadResult.failed(ReadStatus.UNAVAILABLE, exc.detail)
        except NotFound as exc:
            return ReadResult.failed(ReadStatus.UNAVAILABLE, exc.detail)
        return ReadResult(
            status=ReadStatus.OK,
            value=record.value,
            version=record.version,
            valid_from=record.valid_from,
            recorded_at=record.recorded_at,
            observed_at=record.observed_at,
        )

    def authority(self, fact_key: str) -> AuthorityResult:
        try:
            found = sandbox_authority_read(source=self.source.name, fact_key=fact_key)
        except (SandboxUnavailable, NotFound) as exc:
            return AuthorityResult(status=ReadStatus.UNAVAILABLE, detail=exc.detail)
        return AuthorityResult(
            status=ReadStatus.OK, owner=found.owner, source_revision=found.source_revision
        )
