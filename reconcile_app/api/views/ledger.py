"""Evidence (append-only) and memory admission."""

from __future__ import annotations

from typing import Any

from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.request import Request
from rest_framework.response import Response

from reconcile_app.api.permissions import AgentOrOperatorWrites
from reconcile_app.api.serializers import EvidenceInput, EvidenceOutput, MemoryInput, MemoryOutput
from reconcile_app.errors import NotFound
from reconcile_app.filtersets import EvidenceFilterSet, MemoryFilterSet
from reconcile_app.models import EvidenceEntry, MemoryRecord
from reconcile_app.selectors.snapshots import principal_of
from reconcile_app.services.evidence import evidence_append
from reconcile_app.services.memory import memory_admit

PROBLEM = OpenApiResponse(description="problem+json with a stable `code`")


class EvidenceListView(generics.ListAPIView):
    """The evidence ledger. Entries are appended, never updated or deleted."""

    permission_classes = [AgentOrOperatorWrites]
    serializer_class = EvidenceOutput
    filter_backends = [DjangoFilterBackend]
    filterset_class = EvidenceFilterSet
    queryset = EvidenceEntry.objects.select_related("revokes", "supersedes", "recorded_by")

    @extend_schema(
        request=EvidenceInput,
        responses={201: EvidenceOutput, 400: PROBLEM, 403: PROBLEM, 409: PROBLEM},
    )
    def post(self, request: Request) -> Response:
        payload = EvidenceInput(data=request.data)
        payload.is_valid(raise_exception=True)
        entry = evidence_append(
            **payload.validated_data, recorded_by=principal_of(request.user, request.auth)
        )
        return Response(EvidenceOutput(entry).data, status=status.HTTP_201_CREATED)


class EvidenceDetailView(generics.RetrieveAPIView):
    """One entry. PUT, PATCH and DELETE answer 405: the ledger is append-only."""

    permission_classes = [AgentOrOperatorWrites]
    serializer_class = EvidenceOutput

    def get_object(self) -> EvidenceEntry:
        entry = (
            EvidenceEntry.objects.select_related("revokes", "supersedes", "recorded_by")
            .filter(evidence_id=self.kwargs["evidence_id"])
            .first()
        )
        if entry is None:
            raise NotFound(f"no evidence {self.kwargs['evidence_id']}", code="evidence_not_found")
        return entry


class MemoryListView(generics.ListAPIView):
    permission_classes = [AgentOrOperatorWrites]
    serializer_class = MemoryOutput
    filter_backends = [DjangoFilterBackend]
    filterset_class = MemoryFilterSet
    queryset = MemoryRecord.objects.select_related("agent", "supersedes")

    @extend_schema(
        request=MemoryInput,
        responses={201: MemoryOutput, 400: PROBLEM, 403: PROBLEM, 409: PROBLEM, 423: PROBLEM},
    )
    def post(self, request: Request) -> Response:
        payload = MemoryInput(data=request.data)
        payload.is_valid(raise_exception=True)
        data: dict[str, Any] = payload.validated_data
        record = memory_admit(agent=principal_of(request.user, request.auth), **data)
        return Response(MemoryOutput(record).data, status=status.HTTP_201_CREATED)


class MemoryDetailView(generics.RetrieveAPIView):
    permission_classes = [AgentOrOperatorWrites]
    serializer_class = MemoryOutput

    def get_object(self) -> MemoryRecord:
        record = (
            MemoryRecord.objects.select_related("agent", "supersedes")
            .filter(memory_id=self.kwargs["memory_id"])
            .first()
        )
        if record is None:
            raise NotFound(f"no memory {self.kwargs['memory_id']}", code="memory_not_found")
        return record
