from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from reconcile_app.services.ledger_check import ledger_verify


class Command(BaseCommand):
    help = (
        "Walk the evidence hash chain and check each decision snapshot against its hash; exit "
        "non-zero if any entry or snapshot was altered, or an entry removed."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        report = ledger_verify()
        if report.problems:
            for problem in report.problems:
                self.stderr.write(problem)
            raise CommandError(f"ledger verification failed: {len(report.problems)} problem(s)")
        self.stdout.write(f"ledger ok: {report.checked} entries, head {report.head_hash[:16]}")
        self.stdout.write(f"snapshots ok: {report.snapshots}, each matching its hash")
