from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from drills_app.bench import effects, http, owner, reconcile
from drills_app.bench.common import scratch_database
from lineage_app import bench as lineage

TARGETS: dict[str, Callable[..., None]] = {
    "reconcile": reconcile.run,
    "effects": effects.run,
    "lineage": lineage.run,
    "http": http.run,
    "owner": owner.run,
}
DEFAULT_REPEAT = 200
OWNER_CALLS = 1000


class Command(BaseCommand):
    help = "Run a benchmark in a scratch database and print its figures."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("target", choices=sorted(TARGETS))
        parser.add_argument(
            "--repeat",
            type=int,
            help=f"runs per measurement (default {DEFAULT_REPEAT}; lineage 5; owner: calls of "
            f"each kind, default {OWNER_CALLS})",
        )
        parser.add_argument(
            "--commits",
            type=int,
            help="effects: number of commits to run (default 10,000); "
            "http: snapshots pre-issued for POST /effects (default 2,000)",
        )
        parser.add_argument(
            "--seconds", type=int, default=10, help="http: seconds of load per measurement"
        )
        parser.add_argument(
            "--rounds",
            type=int,
            default=3,
            help="http: rounds of the bare endpoint's window then the gate's; the table shows "
            "the round with the median ratio (default 3)",
        )
        parser.add_argument(
            "--web-workers", type=int, default=2, help="http: gunicorn sync workers"
        )
        parser.add_argument(
            "--web-threads",
            type=int,
            default=1,
            help="http: threads per gunicorn worker (above 1, gunicorn's gthread worker)",
        )
        parser.add_argument(
            "--agents", type=int, default=50, help="http: agents sending 1 request/s each"
        )
        parser.add_argument(
            "--agent-seconds", type=int, default=20, help="http: seconds of the agents' load"
        )
        parser.add_argument(
            "--history",
            type=int,
            default=100,
            help="http: evidence entries in the reconciled subject's history",
        )
        parser.add_argument(
            "--past-decisions",
            type=int,
            default=2000,
            help="http, reconcile: decisions issued on the account before the load (then "
            "ANALYZE), as a gate in production has behind it",
        )
        parser.add_argument(
            "--profile",
            action="store_true",
            help="reconcile: CPU per endpoint call and a cProfile of the calls",
        )
        parser.add_argument(
            "--edges", type=int, default=lineage.DEFAULT_EDGES, help="lineage: edges in the graph"
        )

    def handle(
        self,
        *args: Any,
        target: str,
        repeat: int | None,
        commits: int | None,
        edges: int,
        seconds: int,
        rounds: int,
        web_workers: int,
        web_threads: int,
        history: int,
        past_decisions: int,
        agents: int,
        agent_seconds: int,
        profile: bool,
        **options: Any,
    ) -> None:
        if rounds < 1:
            raise CommandError("--rounds must be at least 1")
        # Measure what production runs: with DEBUG on, every query is also logged in memory.
        settings.DEBUG = False
        if target == "owner":  # owner calls only: no database to make
            owner.run(self.stdout, repeat or OWNER_CALLS)
            return
        with scratch_database() as where:
            self.stdout.write(f"scratch database: {where} (DEBUG off)")
            if target == "effects":
                effects.run(self.stdout, repeat or DEFAULT_REPEAT, commits=commits or 10_000)
            elif target == "http":
                http.run(
                    self.stdout,
                    http.HttpOptions(
                        web_workers=web_workers,
                        web_threads=web_threads,
                        seconds=seconds,
                        rounds=rounds,
                        commits=commits or 2000,
                        history=history,
                        past_decisions=past_decisions,
                        agents=agents,
                        agent_seconds=agent_seconds,
                    ),
                )
            elif target == "lineage":
                lineage.run(self.stdout, repeat or lineage.DEFAULT_REPEAT, edges=edges)
            elif target == "reconcile":
                reconcile.run(
                    self.stdout,
                    repeat or DEFAULT_REPEAT,
                    profile=profile,
                    past_decisions=past_decisions,
                )
            else:
                TARGETS[target](self.stdout, repeat or DEFAULT_REPEAT)
