from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from drills_app.soak.estate import EstateError
from drills_app.soak.report import report_write
from drills_app.soak.run import SoakOptions, soak_run


class Command(BaseCommand):
    help = (
        "Soak the real processes: start gunicorn, Celery workers and beat on the configured "
        "database engine and broker (in a scratch database and var directory), load the demo "
        "estate, run agents that reconcile and commit through the Python client while the "
        "sandbox owner misbehaves (and, optionally, a worker is SIGKILLed now and then), "
        "drain, print a report, and exit non-zero when an invariant fails: a 5xx from the "
        "product, an effect lost or applied twice, an effect not read back, memory growing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        defaults = SoakOptions()
        parser.add_argument("--agents", type=int, default=defaults.agents)
        parser.add_argument(
            "--rate", type=float, default=defaults.rate, help="requests per second per agent"
        )
        parser.add_argument("--minutes", type=float, default=defaults.minutes)
        parser.add_argument("--web", type=int, default=defaults.web, help="gunicorn workers")
        parser.add_argument(
            "--workers", type=int, default=defaults.workers, help="Celery worker processes"
        )
        parser.add_argument(
            "--concurrency", type=int, default=defaults.concurrency, help="pool size per worker"
        )
        parser.add_argument(
            "--kill-worker-every",
            type=float,
            default=defaults.kill_worker_every,
            help="seconds between SIGKILLs of a worker, restarted at once (0: never)",
        )
        parser.add_argument(
            "--fault-every",
            type=float,
            default=defaults.fault_every,
            help="seconds between faults injected into the sandbox owner (0: none)",
        )
        parser.add_argument(
            "--drain-seconds",
            type=float,
            default=defaults.drain_seconds,
            help="longest wait for readbacks and resolutions after the load",
        )
        parser.add_argument(
            "--sample-every",
            type=float,
            default=defaults.sample_every,
            help="seconds between memory samples of every process",
        )
        parser.add_argument(
            "--warmup-seconds",
            type=float,
            default=defaults.warmup_seconds,
            help="a process's memory is judged from this long after its first sample",
        )
        parser.add_argument("--var-dir", type=Path, help="scratch var directory (default: new)")
        parser.add_argument("--port", type=int, default=0, help="web port (default: a free one)")
        parser.add_argument(
            "--keep-database",
            action="store_true",
            help="keep the scratch PostgreSQL database after the run",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        for name in ("agents", "web", "workers", "concurrency"):
            if options[name] < 1:
                raise CommandError(f"--{name} must be at least 1")
        for name in ("rate", "minutes"):
            if options[name] <= 0:
                raise CommandError(f"--{name.replace('_', '-')} must be positive")
        for name in ("kill_worker_every", "fault_every", "drain_seconds", "warmup_seconds"):
            if options[name] < 0:
                raise CommandError(f"--{name.replace('_', '-')} must not be negative")
        if options["sample_every"] <= 0:
            raise CommandError("--sample-every must be positive")
        # httpx logs every request at INFO: the report is the output.
        logging.getLogger("httpx").setLevel(logging.WARNING)
        settings = SoakOptions(
            agents=options["agents"],
            rate=options["rate"],
            minutes=options["minutes"],
            web=options["web"],
            workers=options["workers"],
            concurrency=options["concurrency"],
            kill_worker_every=options["kill_worker_every"],
            fault_every=options["fault_every"],
            drain_seconds=options["drain_seconds"],
            sample_every=options["sample_every"],
            warmup_seconds=options["warmup_seconds"],
            var_dir=options["var_dir"],
            port=options["port"],
            keep_database=options["keep_database"],
        )
        try:
            result = soak_run(settings, say=lambda text: self.stdout.write(f"soak: {text}"))
        except (EstateError, RuntimeError) as exc:
            raise CommandError(str(exc)) from exc
        report_write(result, self.stdout.write)
        if not result.passed:
            raise CommandError("an invariant failed (see the checks above)")
