"""Reads of the audit trail: the API's list, the audit page, its CSV export, and the timeline
each object page shows.

The audit trail is append-only (see AuditEvent); everything here reads it and nothing else:
the actor's name is stored on the row, so no page joins the users table.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.db import connection
from django.db.models import Q, QuerySet
from django.utils import timezone

from reconcile_app.models import AuditEvent, Escalation, MemoryRecord
from reconcile_app.selectors.loose_scan import distinct_walk

# An object page shows the latest actions on the object; the audit page has the rest.
TIMELINE_LIMIT = 50
CSV_COLUMNS: tuple[str, ...] = (
    "at",
    "actor",
    "action",
    "object_kind",
    "object_ref",
    "reason",
    "request_id",
    "before",
    "after",
)
# A cell starting with one of these is read as a formula by spreadsheet programs; reasons are
# free text typed by people, so the export neutralises them (OWASP "CSV injection").
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def console_audit_events() -> QuerySet[AuditEvent]:
    """Every audit event, newest first. One table, no join."""
    return AuditEvent.objects.order_by("-at", "-id")


def audit_suggestions() -> dict[str, list[str]]:
    """Actors, actions and object kinds seen so far, for the filter form: one query, each
    walked from its index (`loose_scan`): a DISTINCT over the three read the whole trail on
    every load of the audit page (about 200 ms at 300k rows)."""
    table = AuditEvent._meta.db_table
    walks = ", ".join(
        distinct_walk(name, table, column)
        for name, column in (
            ("actors", "actor_name"),
            ("actions", "action"),
            ("kinds", "object_kind"),
        )
    )
    sql = (
        f"WITH RECURSIVE {walks}"  # noqa: S608  # nosec B608
        " SELECT 'actors', value FROM actors WHERE value IS NOT NULL"
        " UNION ALL SELECT 'actions', value FROM actions WHERE value IS NOT NULL"
        " UNION ALL SELECT 'kinds', value FROM kinds WHERE value IS NOT NULL"
    )
    found: dict[str, list[str]] = {"actors": [], "actions": [], "kinds": []}
    with connection.cursor() as cursor:
        cursor.execute(sql)
        for name, value in cursor.fetchall():
            found[name].append(value)
    return {name: sorted(values) for name, values in found.items()}


# --- Before and after -----------------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    """One field that an action changed. `name` is empty when the state is not a mapping."""

    name: str
    before: Any
    after: Any
    added: bool = False
    removed: bool = False
    # The action recorded only the state it acted on (no `after`): context, not a removal.
    kept: bool = False


def audit_changes(before: Any, after: Any) -> list[Change]:
    """What differs between `before` and `after`; fields that stayed the same are left out.

    A row with a `before` and no `after` at all (an action that changed nothing it records,
    such as queuing a readback) lists the state it was taken in as `kept`, never as removed.
    """
    if before is None and after is None:
        return []
    if isinstance(before, dict) and after is None:
        return [
            Change(name=name, before=value, after=value, kept=True)
            for name, value in sorted(before.items())
        ]
    if isinstance(before, dict | None) and isinstance(after, dict | None):
        old, new = before or {}, after or {}
        return [
            Change(
                name=name,
                before=old.get(name),
                after=new.get(name),
                added=name not in old,
                removed=name not in new,
            )
            for name in sorted(set(old) | set(new))
            if name not in old or name not in new or old[name] != new[name]
        ]
    if before == after:
        return []
    return [
        Change(name="", before=before, after=after, added=before is None, removed=after is None)
    ]


# --- Timelines ------------------------------------------------------------------------------


@dataclass(frozen=True)
class TimelineEntry:
    event: AuditEvent
    changes: list[Change]


@dataclass(frozen=True)
class Timeline:
    """The operator actions on one object (or, without a ref, on every object of a kind)."""

    object_kind: str
    object_ref: str | None
    entries: list[TimelineEntry]
    truncated: bool
    # Rows about related objects too (a fact's memories and escalations): show each row's.
    mixed: bool = False

    @property
    def audit_query(self) -> str:
        """The audit page's filter for the same rows."""
        query = {"object_kind": self.object_kind}
        if self.object_ref is not None:
            query["object_ref"] = self.object_ref
        return urlencode(query)


def object_timeline(
    *, object_kind: str, object_ref: str | None = None, limit: int = TIMELINE_LIMIT
) -> Timeline:
    """The latest `limit` actions on the object, oldest first: one query.

    Without `object_ref`, the latest actions on every object of the kind.
    """
    rows = AuditEvent.objects.filter(object_kind=object_kind)
    if object_ref is not None:
        rows = rows.filter(object_ref=object_ref)
    return _timeline(rows, object_kind=object_kind, object_ref=object_ref, limit=limit)


def _timeline(
    rows: QuerySet[AuditEvent],
    *,
    object_kind: str,
    object_ref: str | None,
    limit: int,
    mixed: bool = False,
) -> Timeline:
    # The newest `limit` (+1 to know whether there are more), then in reading order.
    latest = list(rows.order_by("-at", "-id")[: limit + 1])
    truncated = len(latest) > limit
    entries = [
        TimelineEntry(event=event, changes=audit_changes(event.before, event.after))
        for event in reversed(latest[:limit])
    ]
    return Timeline(
        object_kind=object_kind,
        object_ref=object_ref,
        entries=entries,
        truncated=truncated,
        mixed=mixed,
    )


def fact_timeline(*, fact_key: str, limit: int = TIMELINE_LIMIT) -> Timeline:
    """The actions on a fact key, its memories and the escalations about it: one query
    (the memories and escalations are subqueries)."""
    memories = MemoryRecord.objects.filter(fact_key=fact_key).values("memory_id")
    escalations = Escalation.objects.filter(fact_key=fact_key).values("escalation_id")
    rows = AuditEvent.objects.filter(
        Q(object_kind="fact", object_ref=fact_key)
        | Q(object_kind="memory", object_ref__in=memories)
        | Q(object_kind="escalation", object_ref__in=escalations)
    )
    return _timeline(rows, object_kind="fact", object_ref=fact_key, limit=limit, mixed=True)


# --- CSV export -----------------------------------------------------------------------------


def _cell(value: str) -> str:
    return f"'{value}" if value.startswith(FORMULA_PREFIXES) else value


def _json(value: Any) -> str:
    return "" if value is None else json.dumps(value, sort_keys=True, ensure_ascii=False)


def audit_csv_rows(events: QuerySet[AuditEvent] | Iterable[AuditEvent]) -> Iterator[list[str]]:
    """The header, then one row per event, read in chunks so the export streams."""
    yield list(CSV_COLUMNS)
    rows = events.iterator(chunk_size=500) if isinstance(events, QuerySet) else events
    utc = timezone.get_fixed_timezone(0)
    for event in rows:
        yield [
            timezone.localtime(event.at, utc).isoformat().replace("+00:00", "Z"),
            _cell(event.actor_name),
            _cell(event.action),
            _cell(event.object_kind),
            _cell(event.object_ref),
            _cell(event.reason),
            _cell(event.request_id),
            _json(event.before),
            _json(event.after),
        ]
