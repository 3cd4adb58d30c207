"""Seed 000's own demo (`run_demo` in its "executable reconciliation artefact"), played against
a running server through the agents' client (`manage.py run_demo`).

Two sides, kept apart on purpose:
- the world (`seed_world_prepare`, `seed_owner_change`) is written into the configured
  database, which the server serves: the demo's own sandbox source and contract (loaded
  through their release gates), a fresh account per run at version 42, the evidence ledger's
  two entries, and a key for the demo agent. The owner changing its record between decision
  and commit is a real write to the sandbox, not a simulation inside the client;
- the agent (`seed_demo_play`) knows only the client and the server's URL.

The seed's `authorise` is its reconciler's verdict on a claim. At this boundary a claim never
authorises anything, so each line reports what the server decided for the action that memory
leads the agent to: the confirmed hold, the seed's next command (releasing the hold, which the
snapshot authorises); the stale "collect", a collections letter, which the hold denies.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils import timezone
from reconcile_client import ReconcileClient, VersionChanged

from reconcile_app.choices import ContractStatus
from reconcile_app.models import ApiKey, Contract, Principal
from reconcile_app.services.contracts import contracts_load
from reconcile_app.services.evidence import evidence_append
from reconcile_app.services.principals import api_key_issue, principal_create
from sandbox_app.services import sandbox_record_write

ESTATE_DIR = Path(__file__).resolve().parent / "seed_estate"
SOURCE = "seed-case-service"
DECISION_CLASS = "seed-collections-demo"
VERSION = "1.0"
PURPOSE = "collections"
FIELD = "collections_status"
LEDGER = "case-ledger"
AGENT_NAME = "seed-demo-agent"
RELEASE = "release_collections_hold"
RETAIN = "retain_manual_review"
LETTER = "send_collections_letter"


class SeedDemoError(Exception):
    """The demo's estate could not be set up (its contract did not go live)."""


@dataclass(frozen=True)
class SeedWorld:
    subject: str
    api_key: str
    evidence_collect: str  # the seed's ev-001: "collect", four hours ago
    evidence_hold: str  # the seed's ev-002: "hold", twenty minutes ago
    now: datetime


def seed_estate_ensure() -> Principal:
    """Load the demo's source and contract (idempotent; a new version goes live only through
    its release gates) and return the demo agent."""
    report = contracts_load(paths=[str(ESTATE_DIR)])
    if report.refused:
        details = "; ".join(f"{item.status}: {item.detail}" for item in report.refused)
        raise SeedDemoError(f"{DECISION_CLASS}@{VERSION} did not go live ({details})")
    if not Contract.objects.filter(
        decision_class=DECISION_CLASS, version=VERSION, status=ContractStatus.ACTIVE
    ).exists():
        raise SeedDemoError(f"{DECISION_CLASS}@{VERSION} is not the active version")
    agent = Principal.objects.filter(name=AGENT_NAME).first()
    if agent is None:
        agent, _ = principal_create(
            name=AGENT_NAME,
            capabilities=[f"{DECISION_CLASS}:{action}" for action in (RELEASE, RETAIN, LETTER)],
        )
        # Nobody ever saw the key it was created with: each run gets (and ends) its own.
        ApiKey.objects.filter(principal=agent).update(revoked_at=timezone.now())
    return agent


def seed_world_prepare(*, now: datetime | None = None) -> SeedWorld:
    """A fresh account as the seed sets it up, and a key the demo agent uses for this run."""
    now = now or timezone.now()
    agent = seed_estate_ensure()
    subject = f"account-17-{secrets.token_hex(4)}"
    sandbox_record_write(
        source=SOURCE,
        subject=subject,
        field=FIELD,
        value="hold",
        version=42,
        valid_from=now - timedelta(minutes=2),
    )
    sandbox_record_write(
        source=SOURCE,
        subject=subject,
        field="contact_status",
        value="none",
        valid_from=now - timedelta(days=30),
    )
    collect = evidence_append(
        kind="observation",
        subject=subject,
        field=FIELD,
        value="collect",
        source=LEDGER,
        observed_at=now - timedelta(hours=4),
        note="Account in standard collections.",
    )
    hold = evidence_append(
        kind="observation",
        subject=subject,
        field=FIELD,
        value="hold",
        source=LEDGER,
        observed_at=now - timedelta(minutes=20),
        note="Hardship approved: collections on hold.",
    )
    return SeedWorld(
        subject=subject,
        api_key=api_key_issue(principal=agent),
        evidence_collect=collect.evidence_id,
        evidence_hold=hold.evidence_id,
        now=now,
    )


def seed_owner_change(*, world: SeedWorld, value: str = "manual_review") -> None:
    """The seed's `mutate_out_of_band`: a caseworker moves the account to manual review in
    the owner system (version 42 → 43), and the case ledger records it."""
    sandbox_record_write(source=SOURCE, subject=world.subject, field=FIELD, value=value)
    evidence_append(
        kind="observation",
        subject=world.subject,
        field=FIELD,
        value=value,
        source=LEDGER,
        observed_at=timezone.now(),
        note="Caseworker opened a manual review.",
    )


def seed_key_revoke(*, world: SeedWorld) -> None:
    """The run's key was never shown to anyone: it ends with the run."""
    prefix = world.api_key.split("_", 2)[1]
    with transaction.atomic():
        ApiKey.objects.filter(prefix=prefix, revoked_at__isnull=True).update(
            revoked_at=timezone.now()
        )


def _claim(world: SeedWorld, value: str, age: timedelta, source: str, note: str) -> Any:
    return {
        "subject": world.subject,
        "field": FIELD,
        "value": value,
        "written_at": world.now - age,
        "purpose": PURPOSE,
        "derived_from": [source],
        "note": note,
    }


def seed_demo_play(
    client: ReconcileClient,
    world: SeedWorld,
    *,
    change_out_of_band: Callable[[], None],
    wait_seconds: float = 30.0,
    warn: Callable[[str], Any] = print,
) -> list[str]:
    """The seed's five steps, as an agent plays them through the client. Returns the lines;
    `warn` hears what the lines cannot say (a readback still pending)."""

    def decide(action: str, claims: list[Any]) -> Any:
        return client.reconcile(
            subject=world.subject,
            purpose=PURPOSE,
            decision_class=DECISION_CLASS,
            proposed_action=action,
            claims=claims,
        )

    hold = _claim(
        world,
        "hold",
        timedelta(minutes=10),
        world.evidence_hold,
        "Hardship suppresses collections.",
    )
    positive = decide(RELEASE, [hold])
    lines = [f"positive: {positive.claims[0].verdict}, authorise={positive.authorises(RELEASE)}"]

    collect = _claim(
        world, "collect", timedelta(hours=3), world.evidence_collect, "Account remains collectible."
    )
    stale = decide(LETTER, [collect])
    lines.append(
        f"negative_stale_memory: {stale.claims[0].verdict}, authorise={stale.authorises(LETTER)}"
    )

    change_out_of_band()
    try:
        client.commit(
            positive,
            action=RELEASE,
            resulting_value="collect",
            idempotency_key=f"{world.subject}-decision-9001",
        )
        lines.append("negative_concurrent_update: accepted (the owner did not notice the change)")
    except VersionChanged as exc:
        lines.append(
            "negative_concurrent_update: rejected "
            f"(state version changed: expected {exc.expected}, found {exc.found})"
        )

    # The protocol's answer to a precondition failure: read again, then act on what holds.
    current = decide(RETAIN, [])
    key = f"{world.subject}-decision-9002"
    first = client.commit(
        current, action=RETAIN, resulting_value="manual_review", idempotency_key=key
    )
    retry = client.commit(
        current, action=RETAIN, resulting_value="manual_review", idempotency_key=key
    )
    same = (
        first.receipt is not None
        and retry.receipt is not None
        and first.receipt.receipt_id == retry.receipt.receipt_id
    )
    version = retry.receipt.resulting_version if retry.receipt else None
    lines.append(f"idempotent_retry: same_receipt={same}, resulting_version={version}")

    observed = client.wait(retry, timeout=wait_seconds)
    found = observed.readback() or {}
    verified = observed.status == "verified" and found.get("version") == version
    lines.append(f"postcondition: {found.get('value')}, verified={verified}")
    if not verified:
        warn(
            f"the effect is {observed.status} after {wait_seconds:.0f}s; readbacks run in the "
            "Celery worker (is one running?)"
        )
    return lines
