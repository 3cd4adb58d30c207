"""Draw again as invalidations the memory supersessions an earlier release drew as derivations.

Migration 0033 relabels the links recorded before it. During a rolling upgrade across it, a
web process of the earlier release still serves after the migration, and each memory that
supersedes another through it is linked as `wasDerivedFrom`: a correction's walk follows that
link (docs/deploy.md, "A rolling upgrade"). Run this once the earlier release is drained; it
is the migration's own relabelling, so a second run changes nothing.
"""

from __future__ import annotations

import importlib
from typing import Any

from django.apps import apps
from django.core.management.base import BaseCommand
from django.db import transaction

MIGRATION = "reconcile_app.migrations.0033_memory_supersession_invalidates"


class Command(BaseCommand):
    help = (
        "Relabel as wasInvalidatedBy the memory supersessions drawn as wasDerivedFrom by a "
        "release before reconcile_app 0033 (after a rolling upgrade across it); idempotent."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        relabel = importlib.import_module(MIGRATION).relabel
        with transaction.atomic():
            changed = relabel(apps, None)
        self.stdout.write(f"memory supersessions relabelled: {changed}")
