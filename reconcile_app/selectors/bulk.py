"""What a bulk triage job would act on: its selection resolved into rows, and its progress.

A selection is either explicit (`keys`: effects' idempotency keys, or contradiction ids) or a
filter (the list pages' own filters). A filter is narrowed to the rows the action applies to
(an effect filter naming no status means every effect the action can act on); explicit
keys are kept as named, and the job skips those already concluded. The preview and the job
resolve a selection through the same function, so what the operator confirmed is what runs.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import QuerySet
from django.http import QueryDict
from django_filters import FilterSet, MultipleChoiceFilter

from reconcile_app.choices import BulkItemState, BulkJobAction, ContradictionStatus
from reconcile_app.errors import NotFound, ValidationFailed
from reconcile_app.filtersets import ContradictionFilterSet, EffectFilterSet
from reconcile_app.models import BulkJob, BulkJobItem, Contradiction
from reconcile_app.selectors.effects import CHECKABLE, RESOLVABLE, console_effects

# A job is one task: beyond this many rows, narrow the filter (or run several jobs).
MAX_ITEMS = 1000
# Rows the preview shows beside the count.
SAMPLE_SIZE = 10
# Every filter the lists apply (console/filtersets.py): "all N matching" must mean the rows
# the list showed, so a filter the list reads and the selection dropped would widen it.
EFFECT_FILTERS = (
    "status",
    "source",
    "action",
    "subject",
    "snapshot_id",
    "created_after",
    "created_before",
)
CONTRADICTION_FILTERS = ("status", "kind", "subject", "field", "detected_after", "detected_before")
# What each action on effects may act on (anything else is skipped when the job reaches it).
EFFECT_ACTIONABLE = {
    BulkJobAction.READBACK: CHECKABLE,
    BulkJobAction.RESOLVE: RESOLVABLE,
}


@dataclass(frozen=True)
class Selection:
    """A resolved selection: every ref in job order, and the rows to show as a sample."""

    refs: list[str]
    sample: list[Any]
    # As asked for, stored on the job: {"keys": [...]} or {"filter": {...}}.
    asked: dict[str, Any]
    # Each effect's status when selected: a resolution acts only on the state selected.
    statuses: dict[str, str] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return len(self.refs)

    @property
    def fingerprint(self) -> str:
        """Names exactly these rows, whatever their order. The preview carries it and the
        confirmation must match it: the count alone would let a row leave and another join
        between the two unseen."""
        return hashlib.sha256("\n".join(sorted(self.refs)).encode()).hexdigest()[:32]


def _one_of(keys: list[Any] | None, filters: dict[str, Any] | None) -> None:
    if keys is None and filters is None:
        raise ValidationFailed(
            "name the rows: either `keys` or a `filter`", code="selection_required"
        )
    if keys is not None and filters is not None:
        raise ValidationFailed(
            "give either `keys` or a `filter`, not both", code="selection_ambiguous"
        )


def _clean_keys(keys: list[Any]) -> list[str]:
    if not isinstance(keys, list) or not all(isinstance(key, str) and key for key in keys):
        raise ValidationFailed("`keys` must be a list of non-empty strings", code="invalid_keys")
    if any("\x00" in key for key in keys):
        # The console's posted preview reads keys from the form as they came (JSON bodies
        # already refuse a NUL); PostgreSQL refuses one in any text it compares, and no
        # idempotency key holds one.
        raise ValidationFailed("a key holds a NUL character", code="invalid_keys")
    unique = list(dict.fromkeys(keys))
    if not unique:
        raise ValidationFailed("`keys` is empty: nothing to act on", code="nothing_matched")
    _bounded(len(unique))
    return unique


def _bounded(count: int) -> None:
    if count > MAX_ITEMS:
        raise ValidationFailed(
            f"{count} rows match; one job acts on at most {MAX_ITEMS}: narrow the filter",
            code="selection_too_large",
            count=count,
            limit=MAX_ITEMS,
        )


def _filter_data(
    filters: Any, allowed: tuple[str, ...], filterset_class: type[FilterSet], exact: type[FilterSet]
) -> QueryDict:
    """The filter as the filterset reads it. Read by the API's exact filters (`exact`), an
    empty value or an empty filter is refused: it would widen a job to every row the action
    can take (a script's unset `$SOURCE` resolving every source's effects). The console's
    lists read an empty field as "any", as their forms do, and its preview shows the count
    and rows before anything runs."""
    if not isinstance(filters, dict):
        raise ValidationFailed("`filter` must be an object", code="invalid_filter")
    strict = filterset_class is exact
    if strict and not filters:
        raise ValidationFailed(
            "an empty `filter` selects every row the action can take: name at least one "
            f"field ({', '.join(allowed)})",
            code="invalid_filter",
        )
    unknown = sorted(set(filters) - set(allowed))
    if unknown:
        raise ValidationFailed(
            f"unknown filter field(s): {', '.join(unknown)}; known: {', '.join(allowed)}",
            code="invalid_filter",
            fields=unknown,
        )
    data = QueryDict(mutable=True)
    for name, value in filters.items():
        values = value if isinstance(value, list) else [value]
        if not all(isinstance(item, str) for item in values):
            raise ValidationFailed(f"filter `{name}` must be text", code="invalid_filter")
        if strict and (not values or not all(item.strip() for item in values)):
            raise ValidationFailed(
                f"filter `{name}` is empty: name a value, or leave the field out",
                code="invalid_filter",
                fields=[name],
            )
        values = [item for item in values if item]
        # A single-valued filter reads only the last of several values: taking the others
        # silently would act on rows the caller did not mean.
        taken = filterset_class.base_filters.get(name)
        if len(values) > 1 and not isinstance(taken, MultipleChoiceFilter):
            raise ValidationFailed(
                f"filter `{name}` takes one value; got {len(values)}", code="invalid_filter"
            )
        data.setlist(name, values)
    return data


def _filtered(filterset: Any) -> QuerySet:
    if not filterset.is_valid():
        detail = "; ".join(
            f"{name}: {' '.join(str(m) for m in messages)}"
            for name, messages in filterset.errors.items()
        )
        raise ValidationFailed(f"invalid filter: {detail}", code="invalid_filter")
    return filterset.qs


def _nothing(count: int) -> None:
    if count == 0:
        raise ValidationFailed("nothing matches this selection", code="nothing_matched")


def effect_selection(
    *,
    action: str,
    keys: list[Any] | None = None,
    filters: dict[str, Any] | None = None,
    filterset_class: type[FilterSet] = EffectFilterSet,
) -> Selection:
    """The effects a bulk `action` would act on, in queue order (oldest first). A filter
    means what `filterset_class` makes of it: the API's exact filters by default; the
    console passes its own, so "all N matching" are the rows its list showed."""
    _one_of(keys, filters)
    actionable = EFFECT_ACTIONABLE.get(action)  # type: ignore[call-overload]
    if actionable is None:
        raise ValidationFailed("action must be readback or resolve", code="invalid_action")
    if keys is not None:
        wanted = _clean_keys(keys)
        rows = console_effects().filter(idempotency_key__in=wanted)
        found = {effect.idempotency_key: effect for effect in rows}
        missing = [key for key in wanted if key not in found]
        if missing:
            raise ValidationFailed(
                f"no effect with key(s): {', '.join(missing[:20])}",
                code="unknown_keys",
                keys=missing[:100],
            )
        return Selection(
            refs=wanted,
            sample=[found[key] for key in wanted[:SAMPLE_SIZE]],
            asked={"keys": wanted},
            statuses={key: found[key].status for key in wanted},
        )
    data = _filter_data(filters, EFFECT_FILTERS, filterset_class, EffectFilterSet)
    queryset = _filtered(filterset_class(data=data, queryset=console_effects()))
    queryset = queryset.filter(status__in=actionable).order_by("created_at", "id")
    statuses = dict(queryset.values_list("idempotency_key", "status")[: MAX_ITEMS + 1])
    refs = list(statuses)
    _nothing(len(refs))
    _bounded(len(refs) if len(refs) <= MAX_ITEMS else queryset.count())
    return Selection(
        refs=refs,
        sample=list(queryset[:SAMPLE_SIZE]),
        asked={
            "filter": {name: data.getlist(name) for name in data},
            "read_by": filterset_class.__name__,
        },
        statuses=statuses,
    )


def effect_batch_end(
    *, action: str, filters: dict[str, Any], filterset_class: type[FilterSet]
) -> datetime | None:
    """Where a job over more than MAX_ITEMS of these effects stops: the commit time of the
    first row past them in queue order (the rows committed before it are the oldest, at most
    MAX_ITEMS), or None when they fit in one job, or when no row was committed before it
    (rows of one instant, a restored or bulk-loaded queue, cannot be split by time: the batch
    would be empty, and "nothing matches" said of a queue too deep for one job)."""
    actionable = EFFECT_ACTIONABLE.get(action)  # type: ignore[call-overload]
    data = _filter_data(filters, EFFECT_FILTERS, filterset_class, EffectFilterSet)
    queryset = _filtered(filterset_class(data=data, queryset=console_effects()))
    in_order = (
        queryset.filter(status__in=actionable)
        .order_by("created_at", "id")
        .values_list("created_at", flat=True)
    )
    return _batch_end(in_order)


def _batch_end(in_order: QuerySet) -> datetime | None:
    """The instant of the first row past the oldest MAX_ITEMS of `in_order` (a values list
    of instants, oldest first), or None when they fit in one job or when no row is older
    than it: rows of one instant cannot be split by time, and the batch would be empty."""
    first_left = next(iter(in_order[MAX_ITEMS : MAX_ITEMS + 1]), None)
    if first_left is None or next(iter(in_order[:1])) >= first_left:
        return None
    return first_left


def console_contradiction_rows() -> QuerySet[Contradiction]:
    return Contradiction.objects.select_related("snapshot").defer("snapshot__content")


def contradiction_selection(
    *,
    ids: list[Any] | None = None,
    filters: dict[str, Any] | None = None,
    filterset_class: type[FilterSet] = ContradictionFilterSet,
) -> Selection:
    """The contradictions a bulk resolve would close (open ones, for a filter), oldest first."""
    _one_of(ids, filters)
    if ids is not None:
        try:
            wanted = list(dict.fromkeys(int(value) for value in ids))
        except (TypeError, ValueError):
            raise ValidationFailed(
                "contradiction ids must be integers", code="invalid_keys"
            ) from None
        if not wanted:
            raise ValidationFailed("no contradiction named", code="nothing_matched")
        _bounded(len(wanted))
        # An id outside the key column's range names no row. Django drops such a value from
        # an `exact` lookup itself, not from `in`, and SQLite refuses to bind it (a 500).
        low, high = connection.ops.integer_field_range(Contradiction._meta.pk.get_internal_type())
        storable = [pk for pk in wanted if low <= pk <= high]
        found = {row.pk: row for row in console_contradiction_rows().filter(pk__in=storable)}
        missing = [str(pk) for pk in wanted if pk not in found]
        if missing:
            raise ValidationFailed(
                f"no contradiction with id(s): {', '.join(missing[:20])}",
                code="unknown_keys",
                keys=missing[:100],
            )
        return Selection(
            refs=[str(pk) for pk in wanted],
            sample=[found[pk] for pk in wanted[:SAMPLE_SIZE]],
            asked={"keys": [str(pk) for pk in wanted]},
        )
    data = _filter_data(filters, CONTRADICTION_FILTERS, filterset_class, ContradictionFilterSet)
    queryset = _open_contradictions(data, filterset_class)
    refs = [str(pk) for pk in queryset.values_list("pk", flat=True)[: MAX_ITEMS + 1]]
    _nothing(len(refs))
    _bounded(len(refs) if len(refs) <= MAX_ITEMS else queryset.count())
    return Selection(
        refs=refs,
        sample=list(queryset[:SAMPLE_SIZE]),
        asked={
            "filter": {name: data.getlist(name) for name in data},
            "read_by": filterset_class.__name__,
        },
    )


def _open_contradictions(data: QueryDict, filterset_class: type[FilterSet]) -> QuerySet:
    queryset = _filtered(filterset_class(data=data, queryset=console_contradiction_rows()))
    return queryset.filter(status=ContradictionStatus.OPEN).order_by("detected_at", "id")


def contradiction_batch_end(
    *, action: str = "", filters: dict[str, Any], filterset_class: type[FilterSet]
) -> datetime | None:
    """effect_batch_end for contradictions: the detection time of the first open one past
    the oldest MAX_ITEMS (`action` is taken for the same call: a resolve, the only one)."""
    data = _filter_data(filters, CONTRADICTION_FILTERS, filterset_class, ContradictionFilterSet)
    # One snapshot's contradictions share its issue time: ties are likelier than for effects.
    return _batch_end(
        _open_contradictions(data, filterset_class).values_list("detected_at", flat=True)
    )


def job_get(*, job_id: str) -> BulkJob:
    job = BulkJob.objects.select_related("created_by").filter(job_id=job_id).first()
    if job is None:
        raise NotFound(f"no job {job_id}", code="job_not_found")
    return job


def job_items(job: BulkJob) -> QuerySet[BulkJobItem]:
    return BulkJobItem.objects.filter(job=job).order_by("position")


def job_failures(job: BulkJob, *, limit: int = 100) -> list[dict[str, str]]:
    """The items that failed, with why (the API's `failures`)."""
    rows = job_items(job).filter(state=BulkItemState.FAILED).values("ref", "detail")[:limit]
    return [{"ref": row["ref"], "detail": row["detail"]} for row in rows]
