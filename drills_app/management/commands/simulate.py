from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from drills_app.simulation import SimulationError, simulation_run


class Command(BaseCommand):
    help = (
        "Drive the demo agents against the demo estate at a gentle rate, with the world "
        "changing under them and occasional injected faults, so the console has fresh "
        "snapshots, contradictions, unknown outcomes and escalations. Runs until interrupted "
        "unless --iterations is given. Needs the demo estate (`load_demo`)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--iterations", type=int, default=0, help="steps to run (default 0: until Ctrl-C)"
        )
        parser.add_argument(
            "--interval", type=float, default=3.5, help="mean seconds between steps (default 3.5)"
        )
        parser.add_argument(
            "--jitter", type=float, default=1.5, help="± seconds around the interval (default 1.5)"
        )
        parser.add_argument(
            "--fault-rate",
            type=float,
            default=0.2,
            help="share of agent actions with an injected fault (default 0.2)",
        )
        parser.add_argument("--seed", type=int, default=None, help="seed for a repeatable run")
        parser.add_argument(
            "--fail-fast", action="store_true", help="stop at the first unexpected error"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["iterations"] < 0 or options["interval"] < 0 or options["jitter"] < 0:
            raise CommandError("--iterations, --interval and --jitter must not be negative")
        if not 0.0 <= options["fault_rate"] <= 1.0:
            raise CommandError("--fault-rate must be between 0 and 1")
        try:
            done = simulation_run(
                iterations=options["iterations"],
                interval=options["interval"],
                jitter=min(options["jitter"], options["interval"]),
                fault_rate=options["fault_rate"],
                seed=options["seed"],
                write=self.stdout.write,
                sleep=time.sleep,
                fail_fast=options["fail_fast"],
            )
        except SimulationError as exc:
            raise CommandError(str(exc)) from exc
        except KeyboardInterrupt:
            self.stdout.write("simulation stopped")
            return
        self.stdout.write(f"simulation done: {done} steps")
