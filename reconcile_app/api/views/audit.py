"""The audit trail, read-only, for every person in a role."""

from __future__ import annotations

from django_filters.rest_framework import DjangoFilterBackend
from rest_framework import generics

from reconcile_app.api.permissions import ReadStaffWriteOperator
from reconcile_app.api.serializers import AuditOutput
from reconcile_app.filtersets import AuditFilterSet
from reconcile_app.models import AuditEvent


class AuditListView(generics.ListAPIView):
    permission_classes = [ReadStaffWriteOperator]
    serializer_class = AuditOutput
    filter_backends = [DjangoFilterBackend]
    filterset_class = AuditFilterSet
    queryset = AuditEvent.objects.all()
