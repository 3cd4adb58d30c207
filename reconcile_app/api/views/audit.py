"""The audit trail, read-only, for every person in a role."""

from __future__ import annotations

from django.db.models import QuerySet
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import extend_schema_view
from rest_framework import generics

from reconcile_app.api.openapi import api_operation
from reconcile_app.api.permissions import ReadStaffWriteOperator
from reconcile_app.api.serializers import AuditOutput
from reconcile_app.filtersets import AuditFilterSet
from reconcile_app.models import AuditEvent
from reconcile_app.selectors.audit import console_audit_events


@extend_schema_view(
    get=api_operation(
        operation_id="audit_list",
        summary="List audit events",
        tag="audit",
        description="People's actions, newest first: who, what, why, the request id, and "
        "the object before and after (people in a role).",
        problems={403: ["people_only"]},
    )
)
class AuditListView(generics.ListAPIView):
    permission_classes = [ReadStaffWriteOperator]
    serializer_class = AuditOutput
    filter_backends = [DjangoFilterBackend]
    filterset_class = AuditFilterSet
    queryset = AuditEvent.objects.none()  # for the schema; requests use get_queryset

    def get_queryset(self) -> QuerySet[AuditEvent]:
        return console_audit_events()
