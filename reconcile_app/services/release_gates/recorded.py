"""Values the owners have actually returned for a contract's fields, from recent reads.

The candidates (candidates.py) are read off the contract itself, so a rule that compares a
field with a literal of the wrong type (`fields.collections_status == true`, `> 5` on a
string) is only ever tried with values of the literal's type, and passes. In production
the owner returns a string, the condition errors and fails closed on every decision. The
values recorded in recent state reads of the same fields from the same owners are what
the policy will really see, so `policy_evaluates` tries them too.

Bounded: only the latest `RECENT_READS` state reads are looked at (a range of the primary
key, whatever the table's size); at most `PER_FIELD` distinct values per field are kept, one
of each JSON type first, and `MAX_STATES` whole states.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.db.models import Max, Q

from reconcile_app.choices import ReadStatus
from reconcile_app.models import StateRead
from reconcile_app.reconciliation.types import ContractSpec

RECENT_READS = 50_000
PER_FIELD = 8
# Distinct values looked at per field before choosing (a type not seen yet is kept beyond).
CHOOSE_FROM = PER_FIELD * 4
# Whole states (the fields as one decision read them together), newest first.
MAX_STATES = 50


@dataclass(frozen=True)
class Recorded:
    """What the owners returned: per field, distinct values (`values`); and the fields as
    single decisions read them together (`states`: a rule guarded by another field meets a
    mistyped value only beside that field's real value)."""

    values: dict[str, list[Any]]
    states: list[dict[str, Any]]


def _kind(value: Any) -> str:
    """The JSON type, which is what CEL compares by (a bool is not a number here)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def recorded_values(spec: ContractSpec) -> Recorded:
    """Values read `ok` from each field's own source in the latest state reads: per field, a
    value of each type seen first, then others, `PER_FIELD` at most (every type seen is
    kept, however many values came before it); and up to `MAX_STATES` distinct states."""
    latest = StateRead.objects.aggregate(latest=Max("id"))["latest"] if spec.fields else None
    if latest is None:
        return Recorded(values={}, states=[])
    wanted = Q()
    for field in spec.fields:
        wanted |= Q(field=field.name, source__name=field.source)
    rows = (
        StateRead.objects.filter(wanted, id__gt=latest - RECENT_READS, status=ReadStatus.OK)
        .order_by("-id")
        .values_list("snapshot_id", "field", "value")
    )
    found: dict[str, dict[str, Any]] = {field.name: {} for field in spec.fields}
    kinds: dict[str, dict[str, Any]] = {field.name: {} for field in spec.fields}
    by_snapshot: dict[int, dict[str, Any]] = {}
    for snapshot_id, name, value in rows.iterator(chunk_size=2000):
        kinds[name].setdefault(_kind(value), value)
        if len(found[name]) < CHOOSE_FROM:
            found[name].setdefault(_text(value), value)
        if len(by_snapshot) < MAX_STATES * 4 or snapshot_id in by_snapshot:
            by_snapshot.setdefault(snapshot_id, {})[name] = value
    values = {
        name: _diverse(list(kinds[name].values()), list(found[name].values()))
        for name in found
        if found[name]
    }
    states: dict[str, dict[str, Any]] = {}
    for state in by_snapshot.values():
        if len(states) < MAX_STATES:
            states.setdefault(_text(state), state)
    return Recorded(values=values, states=list(states.values()))


def _text(value: Any) -> str:
    """A key telling values apart as CEL does (`1`, `1.0` and `true` three values), which
    canonical_json, normalising numbers, would not."""
    return json.dumps(value, sort_keys=True)


def _diverse(first_of_each_kind: list[Any], values: list[Any]) -> list[Any]:
    """The first value of each type, then the rest in the order read, `PER_FIELD` at most."""
    chosen = list(first_of_each_kind)
    texts = {_text(value) for value in chosen}
    chosen += [value for value in values if _text(value) not in texts]
    return chosen[: max(PER_FIELD, len(first_of_each_kind))]
