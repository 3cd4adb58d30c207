"""Reconcile over the API: the request, the snapshot it issues, and replay (docs/api.md,
"Reconcile"). Output serializers document what `snapshot_representation` builds from the
stored content; they are the schema's, the response is built from the content itself.

Some public field names (`source`, `required`, `fields`) shadow attributes of DRF's own
classes in the type stubs; the names are the API contract, so those lines tell mypy so.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers
from rest_framework.fields import empty

from reconcile_app.api.fields import Identifier, Text, Value
from reconcile_app.api.kept_fields import FieldsBuiltOnce
from reconcile_app.choices import (
    Completeness,
    Consistency,
    ContradictionKind,
    ContradictionStatus,
    DecisionResult,
    ReadStatus,
    Verdict,
)
from reconcile_app.errors import ValidationFailed

ENGINE_REASON_CODES = (
    "state_unavailable, stale_state, source_quarantined, contract_incomplete, "
    "evidence_missing, state_conflict, contradiction, value_not_permitted, "
    "action_not_permitted, no_rule_matched"
)


class ClaimInput(serializers.Serializer):
    """A remembered claim. With `memory_id` (the record it was recalled from) the other
    fields may be left out: they are the record's. Absent stays absent (no defaults), so the
    service can tell a field left out from one stated."""

    memory_id = Identifier(max_length=100, required=False)
    subject = Identifier(required=False)
    field = Identifier(required=False)
    value = Value(allow_null=True, required=False)
    written_at = serializers.DateTimeField(required=False, allow_null=True)
    memory_class = Identifier(required=False, allow_blank=True)
    purpose = Text(max_length=150, required=False, allow_blank=True)
    derived_from = serializers.ListField(child=Text(max_length=200), required=False, max_length=100)
    note = Text(max_length=2000, required=False, allow_blank=True, default="")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs.get("memory_id"):
            missing = [name for name in ("subject", "field", "value") if name not in attrs]
            if missing:
                raise serializers.ValidationError(
                    {name: ["This field is required without a memory_id."] for name in missing}
                )
        return attrs


# Validated on every call at the gate: its fields are built once per thread, not copied per
# request (api/kept_fields.py). No docstring: it would become the schema's description.
class ReconcileInput(FieldsBuiltOnce):
    subject = Identifier()
    purpose = Text(max_length=150)
    decision_class = Identifier(max_length=150)
    proposed_action = Text(max_length=150, required=False, allow_blank=True, default="")
    # Absent, not null, when not given: a snapshot binds a value only when one was proposed.
    proposed_value = Value(required=False, allow_null=True)
    contract_version = Text(max_length=50, required=False, allow_null=True, default=None)
    claims = ClaimInput(many=True, required=False, default=list, max_length=1000)  # type: ignore[call-arg]


class FieldReadOutput(serializers.Serializer):
    """One required or optional field as its owner answered (a value only when `ok` or
    `stale`: an unavailable owner yields null, never a remembered value)."""

    value = serializers.JSONField(allow_null=True)
    version = serializers.IntegerField(allow_null=True)
    source = serializers.CharField()  # type: ignore[assignment]  # API name
    status = serializers.ChoiceField(choices=ReadStatus.choices)
    required = serializers.BooleanField()  # type: ignore[assignment]  # API name
    observed_at = serializers.DateTimeField(allow_null=True)
    valid_from = serializers.DateTimeField(allow_null=True)
    recorded_at = serializers.DateTimeField(allow_null=True)
    read_at = serializers.DateTimeField()
    max_age_seconds = serializers.IntegerField()
    consistency = serializers.ChoiceField(choices=Consistency.choices)
    evidence = serializers.ListField(child=serializers.CharField())
    detail = serializers.CharField(allow_blank=True)
    inputs = serializers.DictField(
        allow_null=True,
        required=False,
        help_text="event-sourced fields: what the reducer computed the value from",
    )
    mode = serializers.ChoiceField(
        choices=[("live", "live"), ("event_sourced", "event_sourced")],
        required=False,
        help_text="how the field's source was read when the snapshot was issued: `live` (asked "
        "for the current value) or `event_sourced` (the owner's events folded by the reducer); "
        "absent from snapshots issued before content schema 3",
    )


class ReasonOutput(serializers.Serializer):
    code = serializers.CharField(
        help_text=f"the engine's ({ENGINE_REASON_CODES}) or the contract's own: an open set"
    )
    detail = serializers.CharField()


class DecisionOutput(serializers.Serializer):
    result = serializers.ChoiceField(choices=DecisionResult.choices)
    permitted_actions = serializers.ListField(child=serializers.CharField())
    reasons = ReasonOutput(many=True)
    policy_version = serializers.CharField()


class ClaimVerdictOutput(serializers.Serializer):
    """A claim as judged, with the claim itself (the record's, when recalled)."""

    index = serializers.IntegerField()
    verdict = serializers.ChoiceField(choices=Verdict.choices)
    reason = serializers.CharField()
    evidence = serializers.ListField(child=serializers.CharField())
    subject = serializers.CharField()
    field = serializers.CharField()
    value = serializers.JSONField(allow_null=True)
    written_at = serializers.DateTimeField(allow_null=True)
    memory_class = serializers.CharField(allow_blank=True)
    purpose = serializers.CharField(allow_blank=True)
    derived_from = serializers.ListField(child=serializers.CharField())
    note = serializers.CharField(allow_blank=True)
    memory_id = serializers.CharField(
        required=False, help_text="present when the claim was recalled from a memory record"
    )


class ContradictionSide(serializers.Serializer):
    value = serializers.JSONField(allow_null=True)
    source = serializers.CharField()  # type: ignore[assignment]  # API name
    ref = serializers.CharField()


class ContradictionOutput(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=ContradictionKind.choices)
    subject = serializers.CharField()
    field = serializers.CharField()
    state = ContradictionSide()
    other = ContradictionSide()
    detail = serializers.CharField()
    status = serializers.ChoiceField(choices=ContradictionStatus.choices)
    snapshot_id = serializers.CharField()
    detected_at = serializers.DateTimeField()
    last_seen_at = serializers.DateTimeField(
        help_text="the last snapshot that saw this disagreement (retries join the open row)"
    )
    resolved_at = serializers.DateTimeField(allow_null=True)
    resolved_by = serializers.CharField(allow_null=True)
    resolution_note = serializers.CharField(allow_blank=True)


class SnapshotActionOutput(serializers.Serializer):
    """How to commit one action this snapshot can authorise."""

    field = serializers.CharField(help_text="the field the action writes")
    if_match = serializers.CharField(
        help_text='the If-Match to send: the version the snapshot read, quoted ("42")'
    )
    commit_deadline = serializers.DateTimeField(
        help_text="the last moment a commit against this snapshot is accepted"
    )


class ContractRefOutput(serializers.Serializer):
    decision_class = serializers.CharField()
    version = serializers.CharField()


class CutoffsOutput(serializers.Serializer):
    valid_time = serializers.DateTimeField()
    recorded_time = serializers.DateTimeField()


class ManifestEntryOutput(serializers.Serializer):
    evidence_id = serializers.CharField()
    hash = serializers.CharField()


class SnapshotOutput(serializers.Serializer):
    snapshot_id = serializers.CharField()
    content_hash = serializers.CharField()
    issued_at = serializers.DateTimeField()
    principal = serializers.CharField()
    subject = serializers.CharField()
    purpose = serializers.CharField()
    decision_class = serializers.CharField()
    proposed_action = serializers.CharField(allow_blank=True)
    proposed_value = serializers.JSONField(
        required=False,
        help_text="present when the request bound a value: the only one it authorises",
    )
    completeness = serializers.ChoiceField(choices=Completeness.choices)
    decision = DecisionOutput()
    fields = serializers.DictField(child=FieldReadOutput())  # type: ignore[assignment]  # API name
    claims = ClaimVerdictOutput(many=True)
    contradictions = ContradictionOutput(many=True)
    actions = serializers.DictField(
        child=SnapshotActionOutput(),
        help_text="for each action this snapshot can authorise (by name): the field it "
        "writes, the If-Match to send and the commit deadline",
    )
    escalation_id = serializers.CharField(allow_null=True)
    contract = ContractRefOutput()
    reducer_version = serializers.CharField(allow_null=True)
    cutoffs = CutoffsOutput()
    ledger_seq = serializers.IntegerField(
        allow_null=True,
        min_value=0,
        help_text=(
            "How far along the evidence chain the decision read (the `seq` of the last entry "
            "it could see); replay `as_recorded` reads no further. Null on snapshots issued "
            "before content schema 5."
        ),
    )
    evidence_manifest = ManifestEntryOutput(many=True)
    tainted_by = serializers.ListField(
        child=serializers.CharField(), help_text="corrections downstream of which it sits"
    )


class ReplayModeField(serializers.ChoiceField):
    """`as_recorded` or `corrected`; anything else (null, a number, another word) is the
    operation's declared 400 `invalid_mode`, not DRF's generic `invalid_request`."""

    def run_validation(self, data: Any = empty) -> Any:
        if data is not empty and data not in REPLAY_MODES:
            raise ValidationFailed(
                "mode must be as_recorded or corrected",
                code="invalid_mode",
                errors={"mode": [f"{data!r} is not one of {', '.join(REPLAY_MODES)}"]},
            )
        return super().run_validation(data)


REPLAY_MODES = ("as_recorded", "corrected")


class ReplayInput(serializers.Serializer):
    mode = ReplayModeField(choices=list(REPLAY_MODES), default="as_recorded")


class ReplayDifferenceOutput(serializers.Serializer):
    path = serializers.CharField(help_text="what differs, e.g. `decision.result`")
    recorded = serializers.JSONField(allow_null=True)
    replayed = serializers.JSONField(allow_null=True)


class ReplayOutput(serializers.Serializer):
    mode = serializers.ChoiceField(choices=["as_recorded", "corrected"])
    exact = serializers.BooleanField()
    snapshot_id = serializers.CharField()
    original_hash = serializers.CharField()
    replayed_hash = serializers.CharField()
    differences = ReplayDifferenceOutput(many=True)
    unavailable_sources = serializers.ListField(
        child=serializers.CharField(),
        help_text=(
            "Sources whose events the decision folded but which could not give them again "
            "now (down, timed out, adapter or reducer gone): the replay is incomplete, not "
            "the decision changed; asking again later may make it exact."
        ),
    )
    inferred_ledger_seq = serializers.IntegerField(
        allow_null=True,
        help_text=(
            "`as_recorded` of a snapshot from before `ledger_seq` was kept (content schema "
            "< 5) that is exact only when read no further along the evidence chain than the "
            "last entry it cites: that position (an entry stamped before its cut-off was "
            "committed after it read). Null otherwise."
        ),
    )
