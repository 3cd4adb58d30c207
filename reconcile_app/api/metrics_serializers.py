"""`GET /api/v1/metrics` as the schema documents it: what `operational_metrics` returns
(reconcile_app.selectors.metrics). The view returns that dict itself; these describe it."""

from __future__ import annotations

from rest_framework import serializers

from reconcile_app.choices import DecisionResult


def _counts(help_text: str) -> serializers.DictField:
    return serializers.DictField(child=serializers.IntegerField(), help_text=help_text)


class PercentilesOutput(serializers.Serializer):
    p50 = serializers.FloatField(allow_null=True)
    p95 = serializers.FloatField(allow_null=True)


class UnknownEffectOutput(serializers.Serializer):
    idempotency_key = serializers.CharField()
    subject = serializers.CharField()
    since = serializers.DateTimeField(allow_null=True)
    age_seconds = serializers.FloatField(allow_null=True)
    resolution_attempts = serializers.IntegerField()


class UnknownOutcomesOutput(serializers.Serializer):
    open = serializers.IntegerField()
    postcondition_failed = serializers.IntegerField(
        help_text="effects read back without the promised change, also awaiting a person"
    )
    oldest_age_seconds = serializers.FloatField(allow_null=True)
    oldest = UnknownEffectOutput(many=True, help_text="the oldest unresolved, at most 20")


class ResolutionSecondsOutput(PercentilesOutput):
    resolved = serializers.IntegerField(help_text="unknown outcomes settled in the window")


class RefusalOutput(serializers.Serializer):
    result = serializers.ChoiceField(choices=DecisionResult.choices)
    code = serializers.CharField()
    count = serializers.IntegerField()


class ReconcileFiguresOutput(serializers.Serializer):
    count = serializers.IntegerField()
    latency_measured = serializers.IntegerField(
        help_text="reconcile requests timed in the window (arrival to response, server side)"
    )
    latency_ms = PercentilesOutput()


class HourOutput(serializers.Serializer):
    hour = serializers.DateTimeField()
    decisions = _counts("by result")
    reconciles = serializers.IntegerField()
    verdicts = _counts("claim verdicts, by verdict")
    latency_ms = PercentilesOutput(allow_null=True)


class OpenEscalationsOutput(serializers.Serializer):
    open = serializers.IntegerField()
    oldest_age_seconds = serializers.FloatField(allow_null=True)
    by_code = _counts("open escalations by code")


class OpenContradictionsOutput(serializers.Serializer):
    open = serializers.IntegerField()
    oldest_age_seconds = serializers.FloatField(allow_null=True)
    by_kind = _counts("open contradictions by kind")


class TotalsOutput(serializers.Serializer):
    decisions = _counts("every decision, by result")
    verdicts = _counts("every claim verdict, by verdict")
    effects = _counts("every effect, by status")


class ActiveQuarantinesOutput(serializers.Serializer):
    active = serializers.IntegerField()
    by_scope = _counts("quarantines in force, by scope")


class LastDrillOutput(serializers.Serializer):
    id = serializers.IntegerField()
    passed = serializers.BooleanField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    protocol = serializers.DictField(
        child=serializers.IntegerField(allow_null=True),
        help_text="the protocol arm's failures, by kind",
    )


class OperationalMetricsOutput(serializers.Serializer):
    generated_at = serializers.DateTimeField()
    window_hours = serializers.IntegerField()
    unknown_outcomes = UnknownOutcomesOutput()
    resolution_seconds = ResolutionSecondsOutput()
    refusals = RefusalOutput(many=True, help_text="reason codes of the decisions not allowed")
    reconcile = ReconcileFiguresOutput()
    hourly = HourOutput(many=True)
    escalations = OpenEscalationsOutput()
    contradictions = OpenContradictionsOutput()
    totals = TotalsOutput()
    quarantines = ActiveQuarantinesOutput()
    last_drill = LastDrillOutput(allow_null=True, help_text="null before any drill has run")
