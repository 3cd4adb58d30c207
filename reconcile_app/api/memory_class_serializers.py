"""Output of the declared memory classes (docs/api.md "Memory classes")."""

from __future__ import annotations

from rest_framework import serializers

from reconcile_app.choices import MemoryAdmission, MemoryKind, MemoryStatus


class MemoryStatusCounts(serializers.Serializer):
    """How many memories of the class the caller can read, in each status (zeros included)."""

    def get_fields(self) -> dict[str, serializers.Field]:
        return {status: serializers.IntegerField() for status in MemoryStatus.values}


class MemoryClassOutput(serializers.Serializer):
    name = serializers.CharField(source="memory_class.name")
    kind = serializers.ChoiceField(source="memory_class.kind", choices=MemoryKind.choices)
    owner = serializers.CharField(source="memory_class.owner")
    default_ttl_days = serializers.IntegerField(
        source="memory_class.default_ttl_days", allow_null=True
    )
    admission = serializers.ChoiceField(
        source="memory_class.admission", choices=MemoryAdmission.choices
    )
    description = serializers.CharField(source="memory_class.description", allow_blank=True)
    # The kind's rules, spelled out for the agent that is about to write.
    expires_by_date = serializers.BooleanField()
    retirement = serializers.CharField()
    counts = MemoryStatusCounts()
    total = serializers.IntegerField()
    quarantined = serializers.BooleanField()
    loaded_at = serializers.DateTimeField(source="memory_class.loaded_at")
    updated_at = serializers.DateTimeField(source="memory_class.updated_at")
