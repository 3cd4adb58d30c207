"""The lineage API's answers as the schema documents them (the views build plain dicts)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers


class LineageNodeSerializer(serializers.Serializer):
    node = serializers.CharField(help_text="`kind:ref`, e.g. `snapshot:snap_…`")
    kind = serializers.CharField()
    ref = serializers.CharField()
    label = serializers.CharField(allow_blank=True)  # type: ignore[assignment]  # API name
    recorded_at = serializers.DateTimeField(allow_null=True)


@extend_schema_field(
    {
        "oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
        "description": "the node asked about; every root, as a list, when a walk started "
        "from several (a blast radius)",
    }
)
class RootField(serializers.JSONField):
    pass


class LineageReachSerializer(serializers.Serializer):
    """A walk from one or more roots: counts of everything reached by kind, and a page of it."""

    root = RootField()  # type: ignore[assignment]  # API name
    roots = serializers.ListField(child=serializers.CharField())
    counts = serializers.DictField(child=serializers.IntegerField(), help_text="by node kind")
    total = serializers.IntegerField()
    page = serializers.IntegerField()
    page_size = serializers.IntegerField()
    has_next = serializers.BooleanField()
    nodes = LineageNodeSerializer(many=True)
