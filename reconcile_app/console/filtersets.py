"""The console's filters: the API's filtersets with forgiving text matching.

People type part of a subject or the first characters of an id, in whatever case; the API
keeps its exact filters (its contract), and the console's lists match case-insensitively:
free text (subjects, fields, owners) anywhere in the value, identifiers (snapshot ids, codes,
object refs, keys) from their start. Every other filter, and every choice, is the API's own,
so a console URL still means the same rows in the API, only more of them for partial text.
"""

from __future__ import annotations

from datetime import datetime

import django_filters
from django.db.models import QuerySet

from reconcile_app.choices import EFFECT_PENDING_STATUSES
from reconcile_app.filtersets import (
    AuditFilterSet,
    ContradictionFilterSet,
    EffectFilterSet,
    EscalationFilterSet,
    QuarantineFilterSet,
    SnapshotFilterSet,
)
from reconcile_app.instants import InstantFilter
from reconcile_app.selectors.metrics import unknown_outcomes_settled


def _contains(label: str | None = None, field_name: str | None = None) -> django_filters.CharFilter:
    return django_filters.CharFilter(field_name=field_name, lookup_expr="icontains", label=label)


def _starts(label: str | None = None, field_name: str | None = None) -> django_filters.CharFilter:
    return django_filters.CharFilter(field_name=field_name, lookup_expr="istartswith", label=label)


class ConsoleSnapshotFilterSet(SnapshotFilterSet):
    decision_class = _starts()
    subject = _contains()
    reducer_version = _starts()


class ConsoleEffectFilterSet(EffectFilterSet):
    subject = _contains()
    action = _starts()
    snapshot_id = _starts("Snapshot", "snapshot__snapshot_id")
    # Not the console's: the API's change window is for copying, and "all N matching" here
    # carries only the filters the bulk selection knows (selectors/bulk.EFFECT_FILTERS), so
    # a list narrowed by one it dropped would select more rows than it showed.
    changed_after = None  # type: ignore[assignment]
    changed_before = None  # type: ignore[assignment]
    # The overview's resolution bar: the unknown outcomes it counts, settled in its window.
    settled_after = InstantFilter(method="filter_settled_after", label="Unknown, settled after")

    # A quarantine's "pending effects": sent and not yet concluded, of any age.
    pending = django_filters.ChoiceFilter(
        choices=[("true", "pending only")], method="filter_pending", label="Pending"
    )

    def filter_settled_after(self, queryset: QuerySet, name: str, value: datetime) -> QuerySet:
        return unknown_outcomes_settled(queryset, since=value)

    def filter_pending(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(status__in=EFFECT_PENDING_STATUSES) if value else queryset


class ConsoleContradictionFilterSet(ContradictionFilterSet):
    subject = _contains()
    field = _contains()
    # As for effects: the bulk selection (CONTRADICTION_FILTERS) does not carry it.
    changed_after = None  # type: ignore[assignment]
    changed_before = None  # type: ignore[assignment]


class ConsoleEscalationFilterSet(EscalationFilterSet):
    owner = _contains()
    code = _starts()
    fact_key = _contains()
    subject_lookup = "icontains"


class ConsoleQuarantineFilterSet(QuarantineFilterSet):
    target = _contains()


class ConsoleAuditFilterSet(AuditFilterSet):
    actor = _contains("Actor", "actor_name")
    object_ref = _starts()
