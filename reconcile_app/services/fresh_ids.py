"""Identifiers the product makes up for records a caller did not name."""

from __future__ import annotations

from secrets import token_hex

from django.db import models


def fresh_id(model: type[models.Model], field: str, prefix: str) -> str:
    """`prefix` and 48 random bits, not yet held in `model.field`. A clash (one draw in about
    28 million once ten million records are held) draws again: an id nobody chose is never
    refused as taken."""
    while True:
        candidate = f"{prefix}{token_hex(6)}"
        if not model._default_manager.filter(**{field: candidate}).exists():
            return candidate
