"""Every enumerated value of sandbox_app, in one place."""

from __future__ import annotations

from django.db import models


class FaultKind(models.TextChoices):
    UNAVAILABLE = "unavailable"
    LATENCY = "latency"
    TIMEOUT_AFTER_COMMIT = "timeout_after_commit"
    LAG = "lag"
    DROP_POSTCONDITION = "drop_postcondition"
    DUPLICATE_DELIVERY = "duplicate_delivery"
    REORDER = "reorder"
    # The owner executes the command, then forgets its idempotency key (its dedupe record is
    # lost): a repeat of the key is new to it, and its ledger says it never executed it.
    LOSE_DEDUPE_RECORD = "lose_dedupe_record"
