"""Bulk triage on the API: the request that starts a job and the job's progress."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from reconcile_app.choices import BulkJobAction, BulkJobStatus
from reconcile_app.limits import MAX_REASON_CHARACTERS
from reconcile_app.models import BulkJob
from reconcile_app.selectors.bulk import MAX_ITEMS, job_failures


@extend_schema_field(
    {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
)
class FilterValue(serializers.Field):
    """A filter's value as the service takes it: text, or a list of texts. The lists' own
    query strings repeat a name (`?status=unknown&status=accepted`), and the service reads a
    filter as the list does; whether a filter takes more than one value is the service's rule
    (400 `invalid_filter`), so the console and this endpoint refuse the same things."""

    default_error_messages = {"invalid": "a text or a list of texts"}

    def to_internal_value(self, data: Any) -> str | list[str]:
        if isinstance(data, str):
            return data
        if isinstance(data, list) and all(isinstance(item, str) for item in data):
            return data
        self.fail("invalid")
        raise AssertionError  # unreachable: fail() raises

    def to_representation(self, value: Any) -> Any:
        return value


class EffectBulkFilter(serializers.Serializer):
    """The effects list's own filters. A filter naming no `status` means every effect the
    action can act on (readback: unknown, accepted, postcondition_failed; resolve: unknown,
    postcondition_failed). `status` takes several values; the others take one."""

    status = FilterValue(required=False)
    # The API names this filter `source` (docs/api.md); it shadows Field.source only in type.
    source = FilterValue(required=False)  # type: ignore[assignment]
    action = FilterValue(required=False)
    subject = FilterValue(required=False)
    snapshot_id = FilterValue(required=False)
    created_after = FilterValue(required=False, help_text="RFC 3339: committed at or after")
    created_before = FilterValue(required=False, help_text="RFC 3339: committed before")


class EffectBulkInput(serializers.Serializer):
    """Either `keys` or `filter` (400 `selection_required` / `selection_ambiguous`)."""

    keys = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        max_length=MAX_ITEMS,
        help_text=f"idempotency keys (at most {MAX_ITEMS}; 400 `unknown_keys` names any "
        "that do not exist)",
    )
    filter = EffectBulkFilter(required=False)
    action = serializers.ChoiceField(choices=BulkJobAction.choices)
    outcome = serializers.ChoiceField(
        choices=["succeeded", "not_executed"],
        required=False,
        help_text="for `resolve` only (400 `outcome_required` without it); `succeeded` still "
        "waits for a readback to verify",
    )
    reason = serializers.CharField(
        max_length=MAX_REASON_CHARACTERS,
        help_text="why (400 `reason_required` when blank); audited",
    )


class JobCancelInput(serializers.Serializer):
    reason = serializers.CharField(
        max_length=MAX_REASON_CHARACTERS,
        help_text="why the job is stopped (400 `reason_required` when blank); audited and "
        "shown on the job and on each item it did not act on",
    )


class ContradictionBulkFilter(serializers.Serializer):
    """The contradictions list's filters; a bulk resolve closes the open ones among them.
    Each takes one value."""

    status = FilterValue(required=False)
    subject = FilterValue(required=False)
    field = FilterValue(required=False)
    kind = FilterValue(required=False)
    detected_after = FilterValue(required=False, help_text="RFC 3339: detected at or after")
    detected_before = FilterValue(required=False, help_text="RFC 3339: detected before")


class ContradictionBulkInput(serializers.Serializer):
    """Either `ids` or `filter` (400 `selection_required` / `selection_ambiguous`)."""

    ids = serializers.ListField(
        child=serializers.IntegerField(),
        required=False,
        max_length=MAX_ITEMS,
        help_text=f"contradiction ids (at most {MAX_ITEMS}; 400 `unknown_keys` names any that "
        "do not exist)",
    )
    filter = ContradictionBulkFilter(required=False)
    note = serializers.CharField(
        max_length=MAX_REASON_CHARACTERS,
        help_text="the resolution note each contradiction keeps (400 `reason_required` when "
        "blank); audited",
    )


class JobFailure(serializers.Serializer):
    ref = serializers.CharField()
    detail = serializers.CharField()


class JobOutput(serializers.ModelSerializer):
    """A job's progress. `done` counts items finished without error (`skipped` ones — already
    concluded when the job reached them — included, and `still_unknown` ones: re-checked, and
    the owner could not settle them yet); `done + failed == count` once `done`. `failed`
    counts errors only: an outcome still unknown after asking is unresolved, not failed."""

    status = serializers.ChoiceField(choices=BulkJobStatus.choices)
    # Declared rather than derived from the model: a PositiveIntegerField's range is the
    # database's, and the schema must not change with the engine it was generated on.
    count = serializers.IntegerField(min_value=0)
    done = serializers.IntegerField(min_value=0)
    failed = serializers.IntegerField(min_value=0)
    skipped = serializers.IntegerField(min_value=0)
    still_unknown = serializers.IntegerField(
        min_value=0,
        help_text="re-checked without error and still unknown (counted in `done` too): "
        "they stay in the unknown-outcome queue",
    )
    created_by = serializers.CharField(source="created_by_name")
    failures = serializers.SerializerMethodField()
    cancelled_by = serializers.CharField(
        source="cancelled_by_name", help_text="who cancelled it (blank unless `cancelled`)"
    )

    class Meta:
        model = BulkJob
        fields = [
            "job_id",
            "kind",
            "action",
            "outcome",
            "reason",
            "status",
            "count",
            "done",
            "failed",
            "skipped",
            "still_unknown",
            "created_by",
            "created_at",
            "finished_at",
            "request_id",
            "selection",
            "failures",
            "cancelled_by",
            "cancel_reason",
        ]

    @extend_schema_field(JobFailure(many=True))
    def get_failures(self, job: BulkJob) -> list[dict[str, Any]]:
        return job_failures(job) if job.failed else []
