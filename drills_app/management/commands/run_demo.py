from __future__ import annotations

import logging
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from reconcile_client import ReconcileClient, ReconcileError

from drills_app.seed_demo import (
    SeedDemoError,
    seed_demo_play,
    seed_key_revoke,
    seed_owner_change,
    seed_world_prepare,
)

DEFAULT_URL = "http://127.0.0.1:8000"


class Command(BaseCommand):
    help = (
        "Play seed 000's own demo against a running server through the Python client and "
        "print its five lines. Sets up its own estate in the configured database (a sandbox "
        "source, a contract that goes live through its release gates, an agent), a fresh "
        "account each run, and changes the owner's record out of band between decision and "
        "commit. The server must serve that database; readbacks need its Celery worker."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--url", default=DEFAULT_URL, help=f"the running server (default {DEFAULT_URL})"
        )
        parser.add_argument(
            "--wait",
            type=float,
            default=30.0,
            help="seconds to wait for the readback (default 30)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        # httpx logs every request at INFO; the demo's output is its five lines.
        logging.getLogger("httpx").setLevel(logging.WARNING)
        try:
            world = seed_world_prepare()
        except SeedDemoError as exc:
            raise CommandError(str(exc)) from exc
        try:
            with ReconcileClient(options["url"], world.api_key) as client:
                lines = seed_demo_play(
                    client,
                    world,
                    change_out_of_band=lambda: seed_owner_change(world=world),
                    wait_seconds=options["wait"],
                    warn=lambda text: self.stderr.write(f"run_demo: {text}"),
                )
        except ReconcileError as exc:
            raise CommandError(
                f"{exc} (is the server at {options['url']} serving this database?)"
            ) from exc
        finally:
            seed_key_revoke(world=world)
        for line in lines:
            self.stdout.write(line)
