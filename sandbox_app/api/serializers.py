"""Input and output shapes of the sandbox's owner-contract endpoints (see sandbox_app.api.views)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from reconcile_app.api.fields import Identifier, Text, Value
from sandbox_app.choices import FaultKind

# The most a version or an event's seq may be set to by hand. Both are 64-bit columns and
# each later write adds one: set at the top (a value past 64 bits, or 2^63 - 1 and then one
# more write) the database refused the write and the owner answered 500. This leaves room for
# 8 * 10^18 writes after it.
SET_BY_HAND_MOST = 10**18


class SandboxWriteInput(serializers.Serializer):
    value = Value(allow_null=True)
    valid_from = serializers.DateTimeField(required=False, allow_null=True, default=None)
    version = serializers.IntegerField(
        required=False, allow_null=True, default=None, min_value=1, max_value=SET_BY_HAND_MOST
    )


class SandboxRecordOutput(serializers.Serializer):
    value = serializers.JSONField(allow_null=True)
    version = serializers.IntegerField()
    valid_from = serializers.DateTimeField()
    recorded_at = serializers.DateTimeField()
    observed_at = serializers.DateTimeField()


# Documented as the closed set it is; any other kind is the service's 400 `unknown_fault`.
@extend_schema_field(serializers.ChoiceField(choices=FaultKind.choices))
class FaultKindText(Text):
    pass


class SandboxFaultInput(serializers.Serializer):
    kind = FaultKindText(max_length=30)
    count = serializers.IntegerField(
        required=False, allow_null=True, default=None, min_value=1, max_value=10**6
    )
    seconds = serializers.IntegerField(required=False, default=0, min_value=0, max_value=10**7)


class SandboxAuthorityInput(serializers.Serializer):
    owner = Text(max_length=200, allow_blank=True)
    source_revision = Text(max_length=200, allow_blank=True)


class SandboxAuthorityOutput(serializers.Serializer):
    owner = serializers.CharField(allow_blank=True)
    source_revision = serializers.CharField(allow_blank=True)
    as_of = serializers.DateTimeField(required=False, help_text="the time asked (as_of form)")
    since = serializers.DateTimeField(
        required=False, help_text="when that authority took effect (as_of form)"
    )


class SandboxEffectInput(serializers.Serializer):
    subject = Identifier()
    field = Identifier()
    action = Text(max_length=150)
    resulting_value = Value(allow_null=True)


class SandboxEventInput(serializers.Serializer):
    event_id = Text(max_length=100)
    type = Text(max_length=60)
    subject = Identifier()
    field = Identifier(required=False, allow_blank=True, default="")
    value = Value(required=False, allow_null=True, default=None)
    seq = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        min_value=-SET_BY_HAND_MOST,
        max_value=SET_BY_HAND_MOST,
    )
    valid_from = serializers.DateTimeField(required=False, allow_null=True, default=None)


class SandboxReceiptOutput(serializers.Serializer):
    """The owner contract's receipt: proof that this command (key, subject, field) ran."""

    receipt_id = serializers.CharField()
    idempotency_key = serializers.CharField()
    subject = serializers.CharField()
    field = serializers.CharField()
    action = serializers.CharField()
    resulting_value = serializers.JSONField(allow_null=True)
    resulting_version = serializers.IntegerField()
    committed_at = serializers.DateTimeField()


class SandboxEventOutput(serializers.Serializer):
    event_id = serializers.CharField()
    seq = serializers.IntegerField()
    type = serializers.CharField()
    subject = serializers.CharField()
    field = serializers.CharField(allow_blank=True)
    value = serializers.JSONField(allow_null=True)
    valid_from = serializers.DateTimeField(allow_null=True)
    recorded_at = serializers.DateTimeField()


class SandboxEventsOutput(serializers.Serializer):
    observed_at = serializers.DateTimeField(
        help_text="the time the owner vouches for (in the past under a `lag` fault)"
    )
    events = SandboxEventOutput(many=True, help_text="in `seq` order, as delivered")


class SandboxEventAppendedOutput(serializers.Serializer):
    event_id = serializers.CharField()
    seq = serializers.IntegerField()
    recorded_at = serializers.DateTimeField()


class SandboxFaultOutput(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=FaultKind.choices)
    count = serializers.IntegerField(allow_null=True, help_text="uses left; null: until cleared")
    seconds = serializers.IntegerField()


class SandboxFaultsClearedOutput(serializers.Serializer):
    cleared = serializers.IntegerField()
