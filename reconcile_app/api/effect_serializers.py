"""Effects over the API: the commit request, the effect with its timeline, and the operators'
resolve and escalate requests (docs/api.md, Effects)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from reconcile_app.api.fields import Justification, Text, Value


class EffectInput(serializers.Serializer):
    snapshot_id = Text(max_length=80)
    action = Text(max_length=150)
    resulting_value = Value(allow_null=True)


class EffectEventOutput(serializers.Serializer):
    at = serializers.DateTimeField()
    kind = serializers.CharField()
    detail = serializers.JSONField()
    evidence_id = serializers.CharField(allow_blank=True)
    actor = serializers.CharField(allow_blank=True)


class EffectOutput(serializers.Serializer):
    idempotency_key = serializers.CharField()
    status = serializers.CharField()
    receipt = serializers.JSONField(allow_null=True)
    snapshot_id = serializers.CharField(source="snapshot.snapshot_id")
    decision_id = serializers.CharField(source="decision.decision_id")
    principal = serializers.CharField(source="principal.name")
    source = serializers.CharField(source="source.name")  # type: ignore[assignment]  # API name
    action = serializers.CharField()
    subject = serializers.CharField()
    field = serializers.CharField()
    resulting_value = serializers.JSONField(allow_null=True)
    expected_version = serializers.IntegerField()
    resulting_version = serializers.IntegerField(allow_null=True)
    escalation_id = serializers.CharField(
        source="escalation.escalation_id",
        allow_null=True,
        default=None,
        help_text="the approved escalation that authorised an `escalate` snapshot's effect",
    )
    approved_by = serializers.SerializerMethodField(
        help_text="the reviewer who approved that escalation (null when the snapshot allowed it)"
    )
    outcome = serializers.JSONField()
    created_at = serializers.DateTimeField()
    sent_at = serializers.DateTimeField(allow_null=True)
    outcome_at = serializers.DateTimeField(allow_null=True)
    verified_at = serializers.DateTimeField(allow_null=True)
    readback_attempts = serializers.IntegerField()
    resolution_attempts = serializers.IntegerField()
    next_check_at = serializers.DateTimeField(allow_null=True)

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_approved_by(self, effect: Any) -> str | None:
        return effect.approved_by or None


class EffectDetailOutput(EffectOutput):
    timeline = EffectEventOutput(many=True, source="events.all")


class EffectResolveInput(serializers.Serializer):
    outcome = serializers.ChoiceField(choices=["succeeded", "not_executed"])
    reason = Justification()


class EffectEscalateInput(serializers.Serializer):
    reason = Justification()
