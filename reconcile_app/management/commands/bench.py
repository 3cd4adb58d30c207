from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from reconcile_app.bench import effects, reconcile
from reconcile_app.bench.common import scratch_database

TARGETS = {"reconcile": reconcile.run, "effects": effects.run}


class Command(BaseCommand):
    help = "Run a benchmark in a scratch database and print its figures."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("target", choices=sorted(TARGETS))
        parser.add_argument("--repeat", type=int, default=200, help="runs per measurement")
        parser.add_argument(
            "--commits", type=int, default=10_000, help="effects: number of commits to run"
        )

    def handle(self, *args: Any, target: str, repeat: int, commits: int, **options: Any) -> None:
        # Measure what production runs: with DEBUG on, every query is also logged in memory.
        settings.DEBUG = False
        with scratch_database() as where:
            self.stdout.write(f"scratch database: {where} (DEBUG off)")
            if target == "effects":
                effects.run(self.stdout, repeat, commits=commits)
            else:
                TARGETS[target](self.stdout, repeat)
