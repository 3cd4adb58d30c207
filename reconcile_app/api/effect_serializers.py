"""Effects over the API: the commit request, the effect with its timeline, and the operators'
resolve and escalate requests (docs/api.md, Effects)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from reconcile_app.api.fields import Justification, Text, Value
from reconcile_app.choices import EffectStatus
from reconcile_app.services.effects.compensation import compensation_live


class EffectInput(serializers.Serializer):
    snapshot_id = Text(max_length=80)
    action = Text(max_length=150)
    resulting_value = Value(allow_null=True)


class ReceiptOutput(serializers.Serializer):
    """The owner's receipt (the owner contract's 201 body, or its ledger's answer later).
    An owner may add members; only a receipt naming this command's key, subject and field
    is taken as proof."""

    receipt_id = serializers.CharField(required=False)
    idempotency_key = serializers.CharField(required=False)
    subject = serializers.CharField(required=False)
    field = serializers.CharField(required=False)
    action = serializers.CharField(required=False)
    resulting_value = serializers.JSONField(required=False, allow_null=True)
    resulting_version = serializers.IntegerField(required=False, allow_null=True)
    committed_at = serializers.DateTimeField(required=False)


class OutcomeOutput(serializers.Serializer):
    """Why an effect is where it is, when that needs saying: a rejection's or an unknown
    outcome's `code` and `detail` (with `expected` and `found` for `version_changed`), and a
    resolution's verdict. Empty while nothing went wrong."""

    code = serializers.CharField(
        required=False,
        help_text="rejected: `version_changed`, `owner_unavailable`, `not_sent`, `owner_refused`, "
        "`idempotency_key_reused`; unknown: `timeout`, `receipt_mismatch`, `refusal_unproven`, "
        "`sender_lost` "
        "(an owner adapter may add its own)",
    )
    detail = serializers.CharField(required=False, allow_blank=True)
    expected = serializers.IntegerField(required=False, allow_null=True)
    found = serializers.IntegerField(required=False, allow_null=True)
    resolution = serializers.ChoiceField(
        choices=["succeeded", "not_executed"],
        required=False,
        help_text="how an unknown outcome was settled (by the owner's ledger or a person)",
    )
    reason = serializers.CharField(required=False, help_text="a person's resolution: why")


# Receipts and outcomes are passed through as stored (an owner's extra members included): the
# serializers above document them, these fields return them untouched.
@extend_schema_field(ReceiptOutput(allow_null=True))
class ReceiptField(serializers.JSONField):
    pass


@extend_schema_field(OutcomeOutput)
class OutcomeField(serializers.JSONField):
    pass


class EffectEventOutput(serializers.Serializer):
    at = serializers.DateTimeField()
    kind = serializers.CharField(
        help_text="recorded, sent, receipt, rejected, timeout, resolution_attempt, "
        "resolution, manual_resolution, check_requested, readback, retried, ..."
    )
    detail = serializers.JSONField()
    evidence_id = serializers.CharField(allow_blank=True)
    actor = serializers.CharField(allow_blank=True)


class EffectOutput(serializers.Serializer):
    idempotency_key = serializers.CharField()
    status = serializers.ChoiceField(choices=EffectStatus.choices)
    receipt = ReceiptField(allow_null=True, help_text="null until the owner accepted it")
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
    compensates = serializers.CharField(
        source="compensates.idempotency_key",
        allow_null=True,
        default=None,
        help_text="the key of the effect this one compensates (an operator's compensation)",
    )
    compensated_by = serializers.SerializerMethodField(
        help_text="the key of the latest compensation of this effect that was not refused"
    )
    outcome = OutcomeField()
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

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_compensated_by(self, effect: Any) -> str | None:
        # Lists and detail reads carry the annotation (selectors.effects); an effect fresh
        # from a commit does not, and costs one query.
        if hasattr(effect, "compensated_by_key"):
            return effect.compensated_by_key or None
        found = compensation_live(effect)
        return found.idempotency_key if found is not None else None


class EffectDetailOutput(EffectOutput):
    timeline = EffectEventOutput(many=True, source="events.all")


class EffectResolveInput(serializers.Serializer):
    outcome = serializers.ChoiceField(choices=["succeeded", "not_executed"])
    reason = Justification()
    confirmed_by_owner = serializers.BooleanField(
        default=False,
        help_text="The owner confirmed a command still within its execution bound will never "
        "run: without it, `not_executed` is refused (409 `owner_may_still_execute`) until the "
        "bound passes.",
    )


class EffectEscalateInput(serializers.Serializer):
    reason = Justification()


class EffectCompensateInput(serializers.Serializer):
    action = Text(max_length=150)
    resulting_value = Value(allow_null=True)
    reason = Justification()
