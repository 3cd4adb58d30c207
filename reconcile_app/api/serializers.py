"""Input serializers validate shape; output is built from stored content (see representations).

Some public field names (`source`, `required`, `fields`) shadow attributes of DRF's own
classes in the type stubs; the names are the API contract, so those lines tell mypy so.
"""

from __future__ import annotations

from typing import Any

from django.core.validators import validate_slug
from rest_framework import serializers

from reconcile_app.api.fields import Identifier, Justification, Text, Value
from reconcile_app.choices import EvidenceKind, QuarantineScope
from reconcile_app.models import MemoryRecord
from reconcile_app.selectors.ledger import promotion_escalation_id


class ClaimInput(serializers.Serializer):
    """A remembered claim. With `memory_id` (the record it was recalled from) the other
    fields may be left out: they are the record's. Absent stays absent (no defaults), so the
    service can tell a field left out from one stated."""

    memory_id = Identifier(max_length=100, required=False)
    subject = Identifier(required=False)
    field = Identifier(max_length=150, required=False)
    value = Value(allow_null=True, required=False)
    written_at = serializers.DateTimeField(required=False, allow_null=True)
    memory_class = Identifier(max_length=100, required=False, allow_blank=True)
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


class ReconcileInput(serializers.Serializer):
    subject = Identifier()
    purpose = Text(max_length=150)
    decision_class = Identifier(max_length=150)
    proposed_action = Text(max_length=150, required=False, allow_blank=True, default="")
    # Absent, not null, when not given: a snapshot binds a value only when one was proposed.
    proposed_value = Value(required=False, allow_null=True)
    contract_version = Text(max_length=50, required=False, allow_null=True, default=None)
    claims = ClaimInput(many=True, required=False, default=list, max_length=1000)  # type: ignore[call-arg]


class FieldOutput(serializers.Serializer):
    value = serializers.JSONField(allow_null=True)
    version = serializers.IntegerField(allow_null=True)
    source = serializers.CharField()  # type: ignore[assignment]  # API name
    status = serializers.CharField()
    required = serializers.BooleanField()  # type: ignore[assignment]  # API name
    observed_at = serializers.DateTimeField(allow_null=True)
    valid_from = serializers.DateTimeField(allow_null=True)
    recorded_at = serializers.DateTimeField(allow_null=True)
    read_at = serializers.DateTimeField()
    max_age_seconds = serializers.IntegerField()
    consistency = serializers.CharField()
    evidence = serializers.ListField(child=serializers.CharField())
    detail = serializers.CharField(allow_blank=True)


class ReasonOutput(serializers.Serializer):
    code = serializers.CharField()
    detail = serializers.CharField()


class DecisionOutput(serializers.Serializer):
    result = serializers.ChoiceField(choices=["allow", "deny", "escalate", "refuse"])
    permitted_actions = serializers.ListField(child=serializers.CharField())
    reasons = ReasonOutput(many=True)
    policy_version = serializers.CharField()


class ClaimOutput(serializers.Serializer):
    index = serializers.IntegerField()
    verdict = serializers.CharField()
    reason = serializers.CharField()
    evidence = serializers.ListField(child=serializers.CharField())
    subject = serializers.CharField()
    field = serializers.CharField()
    value = serializers.JSONField(allow_null=True)
    memory_id = serializers.CharField(
        required=False, help_text="present when the claim was recalled from a memory record"
    )


class ContradictionSide(serializers.Serializer):
    value = serializers.JSONField(allow_null=True)
    source = serializers.CharField()  # type: ignore[assignment]  # API name
    ref = serializers.CharField()


class ContradictionOutput(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.CharField()
    subject = serializers.CharField()
    field = serializers.CharField()
    state = ContradictionSide()
    other = ContradictionSide()
    detail = serializers.CharField()
    status = serializers.CharField()
    snapshot_id = serializers.CharField()
    detected_at = serializers.DateTimeField()
    last_seen_at = serializers.DateTimeField(
        help_text="the last snapshot that saw this disagreement (retries join the open row)"
    )
    resolved_at = serializers.DateTimeField(allow_null=True)
    resolved_by = serializers.CharField(allow_null=True)
    resolution_note = serializers.CharField(allow_blank=True)


class ActionHowOutput(serializers.Serializer):
    field = serializers.CharField()
    if_match = serializers.CharField()
    commit_deadline = serializers.DateTimeField()


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
    completeness = serializers.ChoiceField(choices=["complete", "degraded", "incomplete"])
    decision = DecisionOutput()
    fields = serializers.DictField(child=FieldOutput())  # type: ignore[assignment]  # API name
    claims = ClaimOutput(many=True)
    contradictions = ContradictionOutput(many=True)
    actions = serializers.DictField(
        child=ActionHowOutput(),
        help_text="for each action this snapshot can authorise: the field, If-Match, deadline",
    )
    escalation_id = serializers.CharField(allow_null=True)
    contract = serializers.DictField(child=serializers.CharField())
    reducer_version = serializers.CharField(allow_null=True)
    cutoffs = serializers.DictField(child=serializers.DateTimeField())
    evidence_manifest = serializers.ListField(child=serializers.DictField())
    tainted_by = serializers.ListField(child=serializers.CharField())


class EvidenceInput(serializers.Serializer):
    kind = serializers.ChoiceField(choices=EvidenceKind.choices)
    subject = Identifier()
    field = Identifier(max_length=150, required=False, allow_blank=True, default="")
    value = Value(required=False, allow_null=True, default=None)
    source = Identifier()  # type: ignore[assignment]  # API name
    observed_at = serializers.DateTimeField()
    revokes = Text(max_length=100, required=False, allow_null=True, default=None)
    supersedes = Text(max_length=100, required=False, allow_null=True, default=None)
    derived_from = serializers.ListField(
        child=Text(max_length=200), required=False, default=list, max_length=100
    )
    note = Text(max_length=4000, required=False, allow_blank=True, default="")
    evidence_id = Text(max_length=100, required=False, allow_null=True, default=None)


class EvidenceOutput(serializers.Serializer):
    evidence_id = serializers.CharField()
    seq = serializers.IntegerField()
    kind = serializers.CharField()
    subject = serializers.CharField()
    field = serializers.CharField()
    value = serializers.JSONField(allow_null=True)
    source = serializers.CharField()  # type: ignore[assignment]  # API name
    observed_at = serializers.DateTimeField()
    recorded_at = serializers.DateTimeField()
    revokes = serializers.CharField(source="revokes.evidence_id", allow_null=True, default=None)
    supersedes = serializers.CharField(
        source="supersedes.evidence_id", allow_null=True, default=None
    )
    derived_from = serializers.ListField(child=serializers.CharField())
    note = serializers.CharField()
    recorded_by = serializers.CharField(source="recorded_by.name", allow_null=True, default=None)
    prev_hash = serializers.CharField()
    hash = serializers.CharField()


class MemoryInput(serializers.Serializer):
    memory_class = Identifier(max_length=100, validators=[validate_slug])
    subject = Identifier()
    purpose = Text(max_length=150)
    field = Identifier(max_length=150, required=False, allow_blank=True, default="")
    fact_key = Identifier(required=False, allow_blank=True, default="")
    value = Value(allow_null=True)
    derived_from = serializers.ListField(
        child=Text(max_length=200), required=False, default=list, max_length=100
    )
    valid_until = serializers.DateField(required=False, allow_null=True, default=None)
    owner = Text(max_length=200, required=False, allow_null=True, default=None)
    source_revision = Text(max_length=200, required=False, allow_blank=True, default="")
    supersedes = Text(max_length=100, required=False, allow_null=True, default=None)
    note = Text(max_length=4000, required=False, allow_blank=True, default="")
    written_at = serializers.DateTimeField(required=False, allow_null=True, default=None)
    memory_id = Text(max_length=100, required=False, allow_null=True, default=None)


class MemoryOutput(serializers.Serializer):
    memory_id = serializers.CharField()
    agent = serializers.CharField(source="agent.name")
    memory_class = serializers.CharField()
    subject = serializers.CharField()
    purpose = serializers.CharField()
    field = serializers.CharField()
    fact_key = serializers.CharField()
    value = serializers.JSONField(allow_null=True)
    note = serializers.CharField()
    derived_from = serializers.ListField(child=serializers.CharField())
    owner = serializers.CharField(allow_null=True)
    source_revision = serializers.CharField()
    valid_until = serializers.DateField(allow_null=True)
    supersedes = serializers.CharField(source="supersedes.memory_id", allow_null=True, default=None)
    status = serializers.CharField()
    # The escalation that asks a reviewer to promote it; null for a memory admitted directly.
    promotion_escalation_id = serializers.SerializerMethodField()
    written_at = serializers.DateTimeField()
    recorded_at = serializers.DateTimeField()

    def get_promotion_escalation_id(self, record: MemoryRecord) -> str | None:
        return promotion_escalation_id(record)


class ResolveContradictionInput(serializers.Serializer):
    note = Justification()


class EscalationOutput(serializers.Serializer):
    escalation_id = serializers.CharField()
    code = serializers.CharField()
    fact_key = serializers.CharField(allow_blank=True)
    snapshot_id = serializers.CharField(
        source="snapshot.snapshot_id", allow_null=True, default=None
    )
    effect_key = serializers.CharField(
        source="effect.idempotency_key", allow_null=True, default=None
    )
    # The suggested memory a promotion asks about; null for every other escalation.
    memory_id = serializers.CharField(source="memory.memory_id", allow_null=True, default=None)
    candidate_refs = serializers.ListField(child=serializers.CharField())
    owner = serializers.CharField()
    next_action = serializers.CharField()
    allowed_until_resolved = serializers.ListField(child=serializers.CharField())
    write_allowed = serializers.BooleanField()
    detail = serializers.CharField(allow_blank=True)
    requested_by = serializers.CharField(source="requested_by.name", allow_null=True, default=None)
    status = serializers.CharField()
    opened_at = serializers.DateTimeField()
    decided_at = serializers.DateTimeField(allow_null=True)
    decided_by = serializers.CharField(source="decided_by.username", allow_null=True, default=None)
    rationale = serializers.CharField(allow_blank=True)
    selected_ref = serializers.CharField(allow_blank=True)


class EscalationDecisionInput(serializers.Serializer):
    rationale = Justification()
    selected_ref = Text(max_length=100, required=False, allow_null=True, default=None)


class FactOutput(serializers.Serializer):
    code = serializers.CharField()
    fact = MemoryOutput(allow_null=True)
    authority = serializers.DictField(allow_null=True)
    candidates = serializers.ListField(child=serializers.CharField())
    escalation_id = serializers.CharField(allow_null=True)
    on = serializers.DateField()
    as_of = serializers.DateTimeField(allow_null=True)
    quarantined_classes = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="as_of answers to people"
    )


class ReplacementInput(serializers.Serializer):
    value = Value(allow_null=True)
    observed_at = serializers.DateTimeField(required=False, allow_null=True, default=None)


class CorrectionInput(serializers.Serializer):
    evidence_id = Text(max_length=100)
    reason = Justification()
    replacement = ReplacementInput(required=False, allow_null=True, default=None)


class ReplayInput(serializers.Serializer):
    mode = serializers.ChoiceField(choices=["as_recorded", "corrected"], default="as_recorded")


class ReplayOutput(serializers.Serializer):
    mode = serializers.CharField()
    exact = serializers.BooleanField()
    snapshot_id = serializers.CharField()
    original_hash = serializers.CharField()
    replayed_hash = serializers.CharField()
    differences = serializers.ListField(child=serializers.DictField())


class QuarantineInput(serializers.Serializer):
    scope = serializers.ChoiceField(choices=QuarantineScope.choices)
    target = Identifier(max_length=150)
    reason = Justification()
    since = serializers.DateTimeField(required=False, allow_null=True, default=None)
    ends_at = serializers.DateTimeField(required=False, allow_null=True, default=None)


class QuarantineLiftInput(serializers.Serializer):
    reason = Justification()


class QuarantineOutput(serializers.Serializer):
    id = serializers.CharField(source="quarantine_id")
    scope = serializers.CharField()
    target = serializers.CharField()
    reason = serializers.CharField()
    status = serializers.CharField()
    since = serializers.DateTimeField()
    ends_at = serializers.DateTimeField(allow_null=True)
    affected = serializers.JSONField()
    created_by = serializers.CharField(source="created_by.username", allow_null=True, default=None)
    created_at = serializers.DateTimeField()
    applied_at = serializers.DateTimeField(allow_null=True)
    lifted_at = serializers.DateTimeField(allow_null=True)
    lifted_by = serializers.CharField(source="lifted_by.username", allow_null=True, default=None)
    lift_reason = serializers.CharField(allow_blank=True)


class AuditOutput(serializers.Serializer):
    at = serializers.DateTimeField()
    actor = serializers.CharField(source="actor_name")
    action = serializers.CharField()
    object_kind = serializers.CharField()
    object_ref = serializers.CharField()
    reason = serializers.CharField(allow_blank=True)
    request_id = serializers.CharField(allow_blank=True)
    before = serializers.JSONField(allow_null=True)
    after = serializers.JSONField(allow_null=True)
