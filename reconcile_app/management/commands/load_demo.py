from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from reconcile_app.demo.estate_loader import (
    AGENT_NAME,
    PEOPLE,
    DemoReport,
    demo_estate_load,
    demo_password,
)
from reconcile_app.errors import ContractFileError, DomainError

KEY_FILE = "demo-agent.key"


def demo_key_path() -> Path:
    return Path(settings.VAR_DIR) / KEY_FILE


def _key_write(path: Path, key: str) -> None:
    # Created with mode 600 from the start: the key never sits on disk readable by others.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(key + "\n")
    os.chmod(path, 0o600)


class Command(BaseCommand):
    help = (
        "Load the demo estate (sources, contracts, people, the demo agent, sandbox records, "
        "evidence, memories and a first batch of reconciliations). Idempotent: only what is "
        f"missing is written. The demo agent's key is printed once and kept in "
        f"RECONCILE_VAR_DIR/{KEY_FILE} (mode 600)."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        if settings.PRODUCTION:
            # The demo's people have passwords printed in the README and on every run.
            raise CommandError(
                "load_demo refuses to run with RECONCILE_PRODUCTION on: the demo estate "
                "creates people with published passwords and an agent with every demo "
                "capability. Create people with create_user and agents with create_principal."
            )
        try:
            report = demo_estate_load()
        except (ContractFileError, DomainError) as exc:
            raise CommandError(str(exc)) from exc
        key_path = demo_key_path()
        if report.agent_key is not None:
            _key_write(key_path, report.agent_key)
        self._summary(report, key_path)

    def _summary(self, report: DemoReport, key_path: Path) -> None:
        out = self.stdout.write
        contracts = report.contracts
        out(
            f"contracts: {len(contracts.contracts_created)} loaded, "
            f"{len(contracts.contracts_unchanged)} unchanged; sources: "
            f"{len(contracts.sources_created) + len(contracts.sources_updated)}"
        )
        for activation in contracts.activations:
            slowest = max((gate["duration_ms"] for gate in activation.gates), default=0)
            out(
                f"  {activation.contract}: {activation.status} after its release gates "
                f"(level {activation.level}, slowest gate {slowest} ms)"
            )
        people = ", ".join(
            f"{name} ({role}, password {demo_password(name)})" for name, role in PEOPLE
        )
        out(f"people ({len(report.people_created)} created): {people}")
        out(
            f"sandbox records: {report.records_created} written; evidence: "
            f"{report.evidence_created} appended; memories: {report.memories_created} admitted"
        )
        if report.batch:
            out(f"first batch of reconciliations ({len(report.batch)}):")
            for label, snapshot in report.batch:
                codes = ", ".join(r["code"] for r in snapshot.content["decision"]["reasons"])
                verdicts = ", ".join(c["verdict"] for c in snapshot.content["claims"]) or "-"
                out(
                    f"  {snapshot.subject:<14} {snapshot.result:<8} {codes:<36} "
                    f"claims: {verdicts:<24} {label}"
                )
        else:
            out("snapshots exist: first batch not issued again")
        if report.agent_key is not None:
            out(f"agent {AGENT_NAME} created; its key (shown once, kept in {key_path}):")
            out(report.agent_key)
        elif key_path.exists():
            out(f"agent {AGENT_NAME} present; its key is in {key_path}")
        else:
            out(
                f"agent {AGENT_NAME} present, but {key_path} is missing (the key was shown "
                "once); create another agent with `manage.py create_principal`"
            )
