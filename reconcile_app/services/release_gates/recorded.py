"""Values the owners have actually returned for a contract's fields, from recent reads.

The candidates (candidates.py) are read off the contract itself, so a rule that compares a
field with a literal of the wrong type (`fields.collections_status == true`, `> 5` on a
string) is only ever tried with values of the literal's type, and passes. In production
the owner returns a string, the condition errors and fails closed on every decision. The
values recorded in recent state reads of the same fields from the same owners are what
the policy will really see, so `policy_evaluates` tries them too.

Bounded: only the latest `RECENT_READS` state reads are looked at (a range of the primary
key, whatever the table's size), and at most `PER_FIELD` distinct values per field are
kept, one of each JSON type first.
"""

from __future__ import annotations

import json
from typing import Any

from django.db.models import Max, Q

from reconcile_app.choices import ReadStatus
from reconcile_app.models import StateRead
from reconcile_app.reconciliation.types import ContractSpec

RECENT_READS = 50_000
PER_FIELD = 8


def _kind(value: Any) -> str:
    """The JSON type, which is what CEL compares by (a bool is not a number here)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def recorded_values(spec: ContractSpec) -> dict[str, list[Any]]:
    """Per field of `spec`, distinct values read `ok` from the field's own source in the
    latest state reads: a value of each type seen first, then others, `PER_FIELD` at most."""
    if not spec.fields:
        return {}
    latest = StateRead.objects.aggregate(latest=Max("id"))["latest"]
    if latest is None:
        return {}
    wanted = Q()
    for field in spec.fields:
        wanted |= Q(field=field.name, source__name=field.source)
    rows = (
        StateRead.objects.filter(wanted, id__gt=latest - RECENT_READS, status=ReadStatus.OK)
        .order_by("-id")
        .values_list("field", "value")[:RECENT_READS]
    )
    seen: dict[str, dict[str, Any]] = {field.name: {} for field in spec.fields}
    for name, value in rows.iterator(chunk_size=2000):
        found = seen[name]
        if len(found) < PER_FIELD * 4:  # enough to choose from; the rest change nothing
            found.setdefault(json.dumps(value, sort_keys=True), value)
    return {name: _diverse(list(found.values())) for name, found in seen.items() if found}


def _diverse(values: list[Any]) -> list[Any]:
    """The first value of each type, then the rest in the order read, `PER_FIELD` at most."""
    first_of_kind: dict[str, Any] = {}
    for value in values:
        first_of_kind.setdefault(_kind(value), value)
    chosen = list(first_of_kind.values())
    chosen += [value for value in values if not any(value is kept for kept in chosen)]
    return chosen[:PER_FIELD]
