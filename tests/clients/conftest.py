"""The agents' client against a live server: the product served by pytest-django's
`live_server` (a real HTTP server in a thread, on the transactional test database), Celery
eager (NOTES.md: readbacks run inside the request, so `wait` sees them), the demo estate's
contracts, and one account the collections contract allows acting on.

Personas come from tests/conftest.py: `agent` holds the collections capabilities, `outsider`
none, `operator` corrects evidence and quarantines sources.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from reconcile_client import Evidence, Memory, ReconcileClient, Snapshot

from reconcile_app.services.evidence import evidence_append
from sandbox_app.models import SandboxEffect
from sandbox_app.services import sandbox_record_write
from tests.conftest import COLLECTIONS, Persona, ago

SOURCE = "case-service"
FIELD = "collections_status"
RELEASE = "release_collections_hold"
RETAIN = "retain_manual_review"
CLIENT_SOURCE = Path(__file__).resolve().parents[2] / "clients" / "python" / "src"


@dataclass
class Served:
    """A live server with an account at version 42 that the contract allows releasing."""

    url: str
    agent: Persona
    subject: str = "account-17"

    def client(self, key: str | None = None, **options: Any) -> ReconcileClient:
        return ReconcileClient(self.url, key or self.agent.key, **options)

    def counting_client(self, sent: list[str], **options: Any) -> ReconcileClient:
        """A client that records each request it puts on the wire ("POST /api/v1/effects")."""

        def record(request: httpx.Request) -> None:
            sent.append(f"{request.method} {request.url.path}")

        http = httpx.Client(
            base_url=self.url,
            headers={"Authorization": f"Bearer {self.agent.key}"},
            timeout=options.pop("timeout", 10.0),
            event_hooks={"request": [record]},
        )
        return ReconcileClient(self.url, self.agent.key, http_client=http, **options)

    def account(self, subject: str, status: str = "collect") -> str:
        """Another account at version 42, evidenced as `status`."""
        collectible(subject, status)
        return subject

    def reconcile(
        self,
        client: ReconcileClient,
        action: str = RELEASE,
        *,
        subject: str | None = None,
        claims: list[dict[str, Any]] | None = None,
    ) -> Snapshot:
        return client.reconcile(
            subject=subject or self.subject,
            purpose="collections",
            decision_class=COLLECTIONS,
            proposed_action=action,
            claims=claims,
        )

    def owner_writes(self, value: str, *, subject: str | None = None, field: str = FIELD) -> None:
        """Someone else changes the owner's record (its version goes up by one)."""
        source = SOURCE if field == FIELD else "complaints-service"
        sandbox_record_write(
            source=source, subject=subject or self.subject, field=field, value=value
        )

    def complaint_remembered(
        self, client: ReconcileClient, **entry: Any
    ) -> tuple[Evidence, Memory]:
        """The case ledger says a complaint is open (attested through `client`), and the agent
        remembers it, made from that entry."""
        attested = client.attest(
            kind="observation",
            subject=self.subject,
            field="complaint_status",
            value="open",
            source="case-ledger",
            observed_at=datetime.now(UTC) - timedelta(minutes=1),
            **entry,
        )
        memory = client.remember(
            memory_class="episodic",
            subject=self.subject,
            purpose="collections",
            field="complaint_status",
            value="open",
            derived_from=[attested.evidence_id],
        )
        return attested, memory

    def executions(self, key: str) -> int:
        """How many times the owner's own ledger saw this key: the duplicate-effect oracle."""
        return SandboxEffect.objects.filter(source=SOURCE, idempotency_key=key).count()


def collectible(subject: str, status: str = "collect") -> None:
    sandbox_record_write(
        source=SOURCE,
        subject=subject,
        field=FIELD,
        value=status,
        version=42,
        valid_from=ago(minutes=20),
    )
    sandbox_record_write(
        source="complaints-service",
        subject=subject,
        field="complaint_status",
        value="none",
        valid_from=ago(days=2),
    )
    evidence_append(
        kind="observation",
        subject=subject,
        field=FIELD,
        value=status,
        source="case-ledger",
        observed_at=ago(minutes=20),
        note=f"Account status: {status}.",
    )


@pytest.fixture
def served(live_server: Any, estate: None, agent: Persona, eager_tasks: Any) -> Served:
    collectible("account-17")
    return Served(url=live_server.url, agent=agent)


@pytest.fixture
def rc(served: Served) -> Iterator[ReconcileClient]:
    with served.client() as client:
        yield client


def client_env(served: Served, key: str | None = None) -> dict[str, str]:
    """The environment a subprocess (the MCP server, the example agent) runs with."""
    return {
        # The client of this checkout, whichever one the environment installed.
        "PYTHONPATH": str(CLIENT_SOURCE),
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", ""),
        "RECONCILE_URL": served.url,
        "RECONCILE_API_KEY": key or served.agent.key,
    }
