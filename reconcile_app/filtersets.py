"""Filters shared by the API and the console (the same query string works in both)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import django_filters
from django.db.models import Exists, OuterRef, Q, QuerySet

from reconcile_app.choices import (
    Completeness,
    ContractStatus,
    ContradictionKind,
    ContradictionStatus,
    CorrectionStatus,
    DecisionResult,
    EffectStatus,
    EscalationStatus,
    EvidenceKind,
    MemoryAdmission,
    MemoryKind,
    MemoryStatus,
    ObligationLevel,
    QuarantineScope,
    QuarantineStatus,
    Verdict,
)
from reconcile_app.instants import InstantFilter
from reconcile_app.models import (
    AuditEvent,
    ClaimVerdict,
    Contract,
    Contradiction,
    Correction,
    DecisionSnapshot,
    Effect,
    EffectEvent,
    Escalation,
    EvidenceEntry,
    MemoryClass,
    MemoryRecord,
    MemoryStatusEvent,
    Quarantine,
    StateRead,
)


def changed_in_window(queryset: QuerySet, form: Any, name: str, times: tuple[str, ...]) -> QuerySet:
    """Rows one of whose change `times` falls in [changed_after, changed_before): what an
    incremental copy asks for a row that moves after it was copied (docs/api.md, "Copying
    records incrementally"). Both bounds apply to the same time, so this runs once, from
    whichever of the two filters the request named first."""
    after = form.cleaned_data.get("changed_after")
    before = form.cleaned_data.get("changed_before")
    if name == "changed_before" and after is not None:
        return queryset  # applied with changed_after
    bounded = Q()
    for time in times:
        inside = Q(**{f"{time}__isnull": False})
        if after is not None:
            inside &= Q(**{f"{time}__gte": after})
        if before is not None:
            inside &= Q(**{f"{time}__lt": before})
        bounded |= inside
    return queryset.filter(bounded)


def changed_by_events(
    queryset: QuerySet, form: Any, name: str, events: QuerySet, owner: str
) -> QuerySet:
    """Rows with an event of their history (`events`, naming the row by `owner`) in
    [changed_after, changed_before): one event inside the window, both bounds on it."""
    after = form.cleaned_data.get("changed_after")
    before = form.cleaned_data.get("changed_before")
    if name == "changed_before" and after is not None:
        return queryset  # applied with changed_after
    if after is not None:
        events = events.filter(at__gte=after)
    if before is not None:
        events = events.filter(at__lt=before)
    return queryset.filter(pk__in=events.values(owner))


def changed_filters() -> tuple[InstantFilter, InstantFilter]:
    return (
        InstantFilter(method="filter_changed", label="Changed at or after"),
        InstantFilter(method="filter_changed", label="Changed before"),
    )


class SnapshotFilterSet(django_filters.FilterSet):
    decision_class = django_filters.CharFilter()
    subject = django_filters.CharFilter()
    result = django_filters.ChoiceFilter(choices=DecisionResult.choices)
    completeness = django_filters.ChoiceFilter(choices=Completeness.choices)
    reducer_version = django_filters.CharFilter()
    source = django_filters.CharFilter(method="filter_source", label="Source")
    issued_after = InstantFilter(field_name="issued_at", lookup_expr="gte", label="Issued after")
    issued_before = InstantFilter(field_name="issued_at", lookup_expr="lt", label="Issued before")
    reason_code = django_filters.CharFilter(method="filter_reason_code", label="Reason code")
    verdict = django_filters.ChoiceFilter(
        choices=Verdict.choices, method="filter_verdict", label="A claim's verdict"
    )

    class Meta:
        model = DecisionSnapshot
        fields = ["decision_class", "subject", "result", "completeness", "reducer_version"]

    def filter_reason_code(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        # The receipt's reasons are a JSON list of {"code", ...}. Both databases print a JSON
        # object's pairs as `"key": value` (jsonb's text form and json.dumps alike), so the
        # quoted pair names one code exactly, not every code that starts with it; JSON
        # containment would be exact too, but SQLite has none.
        pair = f'"code": {json.dumps(value)}'
        return queryset.filter(decision_receipt__reasons__icontains=pair)

    def filter_verdict(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(
            Exists(ClaimVerdict.objects.filter(snapshot=OuterRef("pk"), verdict=value))
        )

    def filter_source(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        # EXISTS rather than a join: a snapshot that read the source twice is listed once.
        return queryset.filter(
            Exists(StateRead.objects.filter(snapshot=OuterRef("pk"), source__name=value))
        )


class EvidenceFilterSet(django_filters.FilterSet):
    subject = django_filters.CharFilter()
    field = django_filters.CharFilter()
    kind = django_filters.ChoiceFilter(choices=EvidenceKind.choices)
    source = django_filters.CharFilter()
    recorded_before = InstantFilter(field_name="recorded_at", lookup_expr="lte")
    recorded_after = InstantFilter(field_name="recorded_at", lookup_expr="gt")

    class Meta:
        model = EvidenceEntry
        fields = ["subject", "field", "kind", "source"]


class MemoryFilterSet(django_filters.FilterSet):
    subject = django_filters.CharFilter()
    fact_key = django_filters.CharFilter()
    memory_class = django_filters.CharFilter()
    status = django_filters.ChoiceFilter(choices=MemoryStatus.choices)
    field = django_filters.CharFilter()
    # Recorded, or moved (promoted, rejected, superseded, expired): every status a record
    # takes, its first included, is a MemoryStatusEvent at its time (services/memory_status).
    changed_after, changed_before = changed_filters()

    class Meta:
        model = MemoryRecord
        fields = ["subject", "fact_key", "memory_class", "status", "field"]

    def filter_changed(self, queryset: QuerySet, name: str, value: datetime) -> QuerySet:
        events = MemoryStatusEvent.objects.all()
        return changed_by_events(queryset, self.form, name, events, "memory_id")


class ContractFilterSet(django_filters.FilterSet):
    decision_class = django_filters.CharFilter()
    status = django_filters.ChoiceFilter(choices=ContractStatus.choices)
    level = django_filters.ChoiceFilter(choices=ObligationLevel.choices)

    class Meta:
        model = Contract
        fields = ["decision_class", "status", "level"]


class MemoryClassFilterSet(django_filters.FilterSet):
    kind = django_filters.ChoiceFilter(choices=MemoryKind.choices)
    admission = django_filters.ChoiceFilter(choices=MemoryAdmission.choices)
    owner = django_filters.CharFilter()

    class Meta:
        model = MemoryClass
        fields = ["kind", "admission", "owner"]


class PromotionFilterSet(django_filters.FilterSet):
    """The reviewers' promotion queue: escalations that ask to promote a suggested memory."""

    status = django_filters.ChoiceFilter(choices=EscalationStatus.choices)
    owner = django_filters.CharFilter()
    memory_class = django_filters.CharFilter(field_name="memory__memory_class", label="Class")

    class Meta:
        model = Escalation
        fields = ["status", "owner"]


class ContradictionFilterSet(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(choices=ContradictionStatus.choices)
    kind = django_filters.ChoiceFilter(choices=ContradictionKind.choices)
    subject = django_filters.CharFilter()
    field = django_filters.CharFilter()
    # When they were detected (their snapshot's issue time), as the effects list has by
    # commit time: narrow a bulk resolve by time, and pin "all N matching" to the rows a
    # preview showed while new ones keep arriving.
    detected_after = InstantFilter(
        field_name="detected_at", lookup_expr="gte", label="Detected at or after"
    )
    detected_before = InstantFilter(
        field_name="detected_at", lookup_expr="lt", label="Detected before"
    )

    # Detected, seen again by a later snapshot, or resolved (docs/api.md).
    changed_after, changed_before = changed_filters()

    class Meta:
        model = Contradiction
        fields = ["status", "kind", "subject", "field"]

    def filter_changed(self, queryset: QuerySet, name: str, value: datetime) -> QuerySet:
        times = ("detected_at", "last_seen_at", "resolved_at")
        return changed_in_window(queryset, self.form, name, times)


class CorrectionFilterSet(django_filters.FilterSet):
    """An auditor's questions of the corrections: of which entry, subject, field or source,
    by whom, in which state, and when they were made."""

    status = django_filters.ChoiceFilter(choices=CorrectionStatus.choices)
    evidence_id = django_filters.CharFilter(field_name="corrected__evidence_id")
    subject = django_filters.CharFilter(field_name="corrected__subject")
    field = django_filters.CharFilter(field_name="corrected__field")
    source = django_filters.CharFilter(field_name="corrected__source")
    actor = django_filters.CharFilter(field_name="actor__username", label="Actor")
    since = InstantFilter(field_name="created_at", lookup_expr="gte", label="From")
    until = InstantFilter(field_name="created_at", lookup_expr="lt", label="Until")

    # Made, or its blast radius completed (docs/api.md).
    changed_after, changed_before = changed_filters()

    class Meta:
        model = Correction
        fields = ["status"]

    def filter_changed(self, queryset: QuerySet, name: str, value: datetime) -> QuerySet:
        return changed_in_window(queryset, self.form, name, ("created_at", "completed_at"))


class EscalationFilterSet(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(choices=EscalationStatus.choices)
    owner = django_filters.CharFilter()
    code = django_filters.CharFilter()
    fact_key = django_filters.CharFilter()
    # What the question is about: a decision's (or an effect's) snapshot's subject, or a
    # suggested memory's. A reviewer deciding one account's release looks for the others.
    subject = django_filters.CharFilter(method="filter_subject", label="Subject")
    subject_lookup = "exact"
    # Opened, or decided (docs/api.md).
    changed_after, changed_before = changed_filters()

    class Meta:
        model = Escalation
        fields = ["status", "owner", "code", "fact_key"]

    def filter_changed(self, queryset: QuerySet, name: str, value: datetime) -> QuerySet:
        return changed_in_window(queryset, self.form, name, ("opened_at", "decided_at"))

    def filter_subject(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        lookup = self.subject_lookup
        return queryset.filter(
            Q(**{f"snapshot__subject__{lookup}": value})
            | Q(**{f"memory__subject__{lookup}": value})
        )


class EffectFilterSet(django_filters.FilterSet):
    # Not `distinct` (django-filter's default for a multiple choice): a filter on the row's
    # own column cannot repeat a row, and SELECT DISTINCT over every column (JSON included)
    # sorted the whole match before a page could be cut from it.
    status = django_filters.MultipleChoiceFilter(choices=EffectStatus.choices, distinct=False)
    subject = django_filters.CharFilter()
    action = django_filters.CharFilter()
    source = django_filters.CharFilter(field_name="source__name", label="Source")
    snapshot_id = django_filters.CharFilter(field_name="snapshot__snapshot_id", label="Snapshot")
    # An outage's rows by when they were committed: narrow a bulk selection by time, and pin
    # "all N matching" to the rows a preview showed while new ones keep arriving.
    created_after = InstantFilter(
        field_name="created_at", lookup_expr="gte", label="Committed at or after"
    )
    created_before = InstantFilter(
        field_name="created_at", lookup_expr="lt", label="Committed before"
    )
    # What moved, not only what was committed: a warehouse copying effects incrementally
    # must see one it copied `unknown` again once it is `accepted`, `verified`... Every
    # transition appends a timeline event in the transaction that makes it, so "changed in
    # the window" is "has an event in the window" (recording is one too). Through the
    # events' own index on `at`, so a narrow window costs what it finds, not the table.
    changed_after, changed_before = changed_filters()

    class Meta:
        model = Effect
        fields = ["status", "subject", "action"]

    def filter_changed(self, queryset: QuerySet, name: str, value: datetime) -> QuerySet:
        return changed_by_events(queryset, self.form, name, EffectEvent.objects.all(), "effect_id")


class QuarantineFilterSet(django_filters.FilterSet):
    status = django_filters.MultipleChoiceFilter(choices=QuarantineStatus.choices, distinct=False)
    scope = django_filters.ChoiceFilter(choices=QuarantineScope.choices)
    target = django_filters.CharFilter()

    class Meta:
        model = Quarantine
        fields = ["status", "scope", "target"]


class AuditFilterSet(django_filters.FilterSet):
    actor = django_filters.CharFilter(field_name="actor_name", label="Actor")
    action = django_filters.CharFilter()
    action_prefix = django_filters.CharFilter(field_name="action", lookup_expr="startswith")
    object_kind = django_filters.CharFilter()
    object_ref = django_filters.CharFilter()
    # Every row one request (or one bulk job) wrote shares its id: an auditor follows it here.
    request_id = django_filters.CharFilter(label="Request id")
    since = InstantFilter(field_name="at", lookup_expr="gte", label="From")
    until = InstantFilter(field_name="at", lookup_expr="lt", label="Until")

    class Meta:
        model = AuditEvent
        fields = ["action", "object_kind", "object_ref"]
