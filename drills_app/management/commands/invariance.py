from __future__ import annotations

import secrets
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from drills_app.bench.common import scratch_database
from drills_app.invariance import run_invariance
from reconcile_app.demo.estate_loader import ESTATE_DIR
from reconcile_app.services.contracts import contracts_load
from reconcile_app.services.principals import principal_create


class Command(BaseCommand):
    help = (
        "History-substitution invariance: paired histories that reduce to the same state must "
        "permit the same actions; duplicated and reordered delivery must not change them. "
        "Runs end to end in a scratch database; exits non-zero on any violation."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--pairs", type=int, default=200)
        parser.add_argument("--seed", type=int, default=2026)

    def handle(self, *args: Any, pairs: int, seed: int, **options: Any) -> None:
        with scratch_database() as where:
            self.stdout.write(f"scratch database: {where}")
            contracts_load(paths=[str(ESTATE_DIR)])
            principal, _ = principal_create(
                name="invariance-agent",
                capabilities=["collections-letter:send_collections_letter"],
            )
            report = run_invariance(
                principal=principal,
                pairs=pairs,
                seed=seed,
                run_id=f"inv-{secrets.token_hex(3)}",
                out=self.stdout,
            )
        if not report.ok:
            raise CommandError("history-substitution invariance violated")
        self.stdout.write("invariance holds")
