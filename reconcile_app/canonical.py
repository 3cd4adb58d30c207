"""Canonical JSON and RFC 3339 times: the bytes that snapshot ids and ledger hashes cover."""

from __future__ import annotations

import hashlib
import json
import math
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any


def rfc3339(moment: datetime | None) -> str | None:
    """UTC with a `Z`, microseconds kept so a stored time round-trips to the same string."""
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _default(value: Any) -> Any:
    if isinstance(value, datetime):
        return rfc3339(value)
    if isinstance(value, date):
        return value.isoformat()
    raise TypeError(f"not canonicalisable: {type(value).__name__}")


def normalise_numbers(value: Any) -> Any:
    """Integral floats become ints (1e20 → 100000000000000000000, -0.0 → 0).

    PostgreSQL's jsonb stores numbers as decimals and gives integral ones back as integers,
    so hashes must not depend on how a number was spelled, or a stored snapshot or ledger
    entry would stop matching its own hash after a round trip.
    """
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        # Through the shortest decimal spelling, as jsonb sees it: 1.2345678901234567e19 is
        # 12345678901234567000 there, not the binary float's 12345678901234567168.
        return int(Decimal(repr(value)))
    if isinstance(value, dict):
        return {key: normalise_numbers(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [normalise_numbers(item) for item in value]
    return value


def canonical_json(value: Any) -> str:
    return json.dumps(
        normalise_numbers(value),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
        default=_default,
    )


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def content_hash(value: Any) -> str:
    return sha256_hex(canonical_json(value))


def same_value(left: Any, right: Any) -> bool:
    """JSON equality that does not confuse 1 with True or 1 with "1"."""
    return canonical_json(left) == canonical_json(right)
