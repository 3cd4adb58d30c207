"""Canonical JSON and RFC 3339 times: the bytes that snapshot ids and ledger hashes cover."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, date, datetime
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


def canonical_json(value: Any) -> str:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_default
    )


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def content_hash(value: Any) -> str:
    return sha256_hex(canonical_json(value))


def same_value(left: Any, right: Any) -> bool:
    """JSON equality that does not confuse 1 with True or 1 with "1"."""
    return canonical_json(left) == canonical_json(right)
