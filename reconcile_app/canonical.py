"""Canonical JSON and RFC 3339 times: the bytes that snapshot ids and ledger hashes cover."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
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
    return _normalised(value, [])


def _normalised(value: Any, respelled: list[Any]) -> Any:
    """`normalise_numbers`, noting in `respelled` each value the JSON text will not spell as
    Python would (an integral float, a time). The common types are told apart by `type`
    first: this walks every value of every snapshot the gate issues."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is dict:
        return {key: _normalised(item, respelled) for key, item in value.items()}
    if kind is list or kind is tuple:
        return [_normalised(item, respelled) for item in value]
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        # Through the shortest decimal spelling, as jsonb sees it: 1.2345678901234567e19 is
        # 12345678901234567000 there, not the binary float's 12345678901234567168.
        respelled.append(value)
        return int(Decimal(repr(value)))
    if isinstance(value, dict):
        return {key: _normalised(item, respelled) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_normalised(item, respelled) for item in value]
    if isinstance(value, date):
        respelled.append(value)  # spelled by `_default`
    return value


def canonical_json(value: Any) -> str:
    return _canonical_dumps(normalise_numbers(value))


def _canonical_dumps(normalised: Any) -> str:
    return json.dumps(
        normalised,
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
        default=_default,
    )


@dataclass(frozen=True)
class Canonical:
    text: str
    # The text spells the value itself, not only its canonical form: no number was
    # respelled and no time written by `_default`. It can then be stored as the value's
    # JSON (keys sorted, which JSON objects and jsonb do not mind) without encoding it again.
    exact: bool


def canonical(value: Any) -> Canonical:
    respelled: list[Any] = []
    text = _canonical_dumps(_normalised(value, respelled))
    return Canonical(text=text, exact=not respelled)


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def content_hash(value: Any) -> str:
    return sha256_hex(canonical_json(value))


# Types whose canonical JSON spells each value one way and no two values alike: two values
# of one of them are the same JSON value exactly when Python finds them equal. (int is not
# here: json.dumps refuses an int past Python's digit limit, which equality would not.)
_SPELLED_ONE_WAY = frozenset({str, bool, type(None)})


def same_value(left: Any, right: Any) -> bool:
    """JSON equality that does not confuse 1 with True or 1 with "1"."""
    # The gate compares every evidence entry's value and every claim's with the state's,
    # mostly strings: those need no canonical text (two encodings per comparison).
    kind = type(left)
    if kind is type(right) and kind in _SPELLED_ONE_WAY:
        return bool(left == right)
    return canonical_json(left) == canonical_json(right)
