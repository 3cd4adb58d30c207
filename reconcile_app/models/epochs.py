from __future__ import annotations

from django.db import models


class ConfigurationEpoch(models.Model):
    """One row; its value changes, in the same transaction, whenever a contract, source,
    principal, capability, API key or a user's `is_active` changes (database triggers,
    migration 0018), so each process knows when its in-process copies went out of date
    (reconcile_app/epochs.py). Random, not counted: a rolled-back change must never leave a
    value that a later, different change could take again."""

    id = models.PositiveSmallIntegerField(primary_key=True, default=1)
    epoch = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"configuration epoch {self.epoch}"
