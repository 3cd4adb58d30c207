from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from reconcile_app.models import Effect, EvidenceEntry, Source
from reconcile_app.services.evidence import evidence_append
from sandbox_app.services import sandbox_record_write
from tests.conftest import COLLECTIONS, ago

SUBJECT = "account-17"


@pytest.fixture
def collectible(estate):
    """account-17 collectible at version 42, no complaint: the contract allows both actions."""
    sandbox_record_write(
        source="case-service",
        subject=SUBJECT,
        field="collections_status",
        value="collect",
        version=42,
        valid_from=ago(minutes=20),
    )
    sandbox_record_write(
        source="complaints-service",
        subject=SUBJECT,
        field="complaint_status",
        value="none",
        valid_from=ago(days=2),
    )
    case_ledger_says_collect(ago(minutes=20), evidence_id="ev-collect")


def case_ledger_says_collect(
    observed_at: datetime, subject: str = SUBJECT, **extra: Any
) -> EvidenceEntry:
    """The case ledger's observation that the account is in standard collections."""
    return evidence_append(
        kind="observation",
        subject=subject,
        field="collections_status",
        value="collect",
        source="case-ledger",
        observed_at=observed_at,
        **extra,
    )


def account_goes_on_hold(**entry: Any) -> None:
    """The owner moves the account to a hardship hold and the case ledger observes it."""
    sandbox_record_write(
        source="case-service", subject=SUBJECT, field="collections_status", value="hold"
    )
    evidence_append(
        kind="observation",
        subject=SUBJECT,
        field="collections_status",
        value="hold",
        source="case-ledger",
        **entry,
    )


def remember_collect(agent: Any, derived_from: list[str], **extra: str) -> str:
    """The agent remembers the account in standard collections, made from `derived_from`;
    the new memory's id."""
    response = agent.post(
        "/api/v1/memories",
        {
            "memory_class": "episodic",
            "subject": SUBJECT,
            "purpose": "collections",
            "field": "collections_status",
            "value": "collect",
            "derived_from": derived_from,
            **extra,
        },
    )
    assert response.status_code == 201, response.content
    return str(response.json()["memory_id"])


def owner_timeout_set(name: str, timeout_ms: int) -> Source:
    """How long the product waits on the source's owner (the sandbox's latency faults end
    there as a timeout, as an HTTP owner's would)."""
    source = Source.objects.get(name=name)
    source.options = {**(source.options or {}), "timeout_ms": timeout_ms}
    source.save(update_fields=["options"])
    return source


def reconcile(persona, action: str = "release_collections_hold", **extra: Any) -> dict[str, Any]:
    response = persona.post(
        "/api/v1/reconcile",
        {
            "subject": SUBJECT,
            "purpose": "collections",
            "decision_class": COLLECTIONS,
            "proposed_action": action,
            **extra,
        },
    )
    assert response.status_code == 201, response.content
    return response.json()


def commit(
    persona,
    snapshot: dict[str, Any],
    action: str,
    value: Any,
    key: str,
    version: int | None = None,
    if_match: str | None = None,
):
    """POST effects; If-Match is the snapshot's read version quoted, `version` quoted, or
    `if_match` exactly as given."""
    if version is None:
        version = snapshot["fields"]["collections_status"]["version"]
    return persona.post(
        "/api/v1/effects",
        {"snapshot_id": snapshot["snapshot_id"], "action": action, "resulting_value": value},
        HTTP_IDEMPOTENCY_KEY=key,
        HTTP_IF_MATCH=f'"{version}"' if if_match is None else if_match,
    )


def released(persona, capture_on_commit_callbacks, key: str):
    """A fresh snapshot acted on (the hold released under `key`), its readback left queued:
    the accepted Effect."""
    snapshot = reconcile(persona)
    with capture_on_commit_callbacks(execute=False):
        response = commit(persona, snapshot, "release_collections_hold", "released", key)
    assert response.status_code == 201, response.content
    return Effect.objects.get(idempotency_key=key)
