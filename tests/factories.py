"""Factories for test data. Every write goes through the real service, never the ORM.

Evidence must chain onto the ledger head and sandbox records must take versions, so the
factories' `_create` calls `evidence_append`, `sandbox_record_write` and `memory_admit`
instead of `Model.objects.create`.
"""

from __future__ import annotations

import textwrap
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import factory
from django.utils import timezone

from reconcile_app.models import EvidenceEntry, MemoryRecord
from reconcile_app.services.contracts import LoadReport, contracts_load
from reconcile_app.services.evidence import evidence_append
from reconcile_app.services.memory import memory_admit
from sandbox_app.models import SandboxRecord
from sandbox_app.services import sandbox_record_write

COLLECTIONS = "collections-contact-release"
ACCOUNT = "account-17"


class EvidenceFactory(factory.Factory):
    """An observation appended to the ledger (hash-chained like any other entry)."""

    class Meta:
        model = EvidenceEntry

    kind = "observation"
    subject = ACCOUNT
    field = "collections_status"
    value = "hold"
    source = "case-ledger"
    observed_at = factory.LazyFunction(lambda: timezone.now() - timedelta(minutes=20))
    evidence_id = factory.Sequence(lambda n: f"ev-f{n:04d}")

    @classmethod
    def _create(cls, model_class: type, *args: Any, **kwargs: Any) -> EvidenceEntry:
        return evidence_append(**kwargs)


class SandboxRecordFactory(factory.Factory):
    """A record in the sandbox owner system (version 1 unless `version` jumps ahead)."""

    class Meta:
        model = SandboxRecord

    source = "case-service"
    subject = ACCOUNT
    field = "collections_status"
    value = "hold"
    version = None
    valid_from = factory.LazyFunction(lambda: timezone.now() - timedelta(minutes=20))

    @classmethod
    def _create(cls, model_class: type, *args: Any, **kwargs: Any) -> SandboxRecord:
        return sandbox_record_write(**kwargs)


class MemoryFactory(factory.Factory):
    """A remembered belief admitted through `memory_admit` (derivation is required)."""

    class Meta:
        model = MemoryRecord

    memory_class = "episodic"
    subject = ACCOUNT
    purpose = "collections"
    field = "collections_status"
    value = "collect"
    derived_from = factory.LazyFunction(list)

    @classmethod
    def _create(cls, model_class: type, *args: Any, **kwargs: Any) -> MemoryRecord:
        return memory_admit(**kwargs)


def seed_account_17(now: datetime, *, complaint: str | None = "none") -> None:
    """The seed's worked example (seed 000 `run_demo`), in real time.

    ev-001 "collect" 4 h ago, ev-002 "hold" 20 min ago, case-service state "hold" at
    version 42 valid from the moment of ev-002; the complaint service says `complaint`.
    """
    SandboxRecordFactory(value="hold", version=42, valid_from=now - timedelta(minutes=20))
    EvidenceFactory(evidence_id="ev-001", value="collect", observed_at=now - timedelta(hours=4))
    EvidenceFactory(evidence_id="ev-002", value="hold", observed_at=now - timedelta(minutes=20))
    if complaint is not None:
        SandboxRecordFactory(source="complaints-service", field="complaint_status", value=complaint)


def seed_collectible(
    now: datetime, *, subject: str = ACCOUNT, complaint: str | None = "none"
) -> None:
    """An account whose evidenced state is "collect" (nothing blocks the release)."""
    SandboxRecordFactory(
        subject=subject, value="collect", version=7, valid_from=now - timedelta(hours=1)
    )
    EvidenceFactory(
        subject=subject,
        value="collect",
        observed_at=now - timedelta(hours=1),
        evidence_id=f"ev-collect-{subject}",
    )
    if complaint is not None:
        SandboxRecordFactory(
            source="complaints-service",
            subject=subject,
            field="complaint_status",
            value=complaint,
        )


def claim(
    value: Any,
    *,
    written_at: datetime,
    subject: str = ACCOUNT,
    field: str = "collections_status",
    **extra: Any,
) -> dict[str, Any]:
    body = {
        "subject": subject,
        "field": field,
        "value": value,
        "written_at": written_at.isoformat().replace("+00:00", "Z"),
        "memory_class": "episodic",
    }
    body.update(extra)
    return body


def reconcile_body(
    *,
    subject: str = ACCOUNT,
    action: str = "release_collections_hold",
    claims: list[dict[str, Any]] | None = None,
    purpose: str = "collections",
    decision_class: str = COLLECTIONS,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "subject": subject,
        "purpose": purpose,
        "decision_class": decision_class,
        "proposed_action": action,
    }
    if claims is not None:
        body["claims"] = claims
    return body


def write_yaml(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def load_yaml(folder: Path, files: dict[str, str]) -> LoadReport:
    """Write `files` (name → YAML text) into `folder` and load them in one batch."""
    paths = [str(write_yaml(folder, name, text)) for name, text in files.items()]
    return contracts_load(paths=paths)
