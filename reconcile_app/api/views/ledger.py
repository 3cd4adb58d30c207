"""Evidence (append-only) and memory admission."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.request import Request
from rest_framework.response import Response

from reconcile_app.api.permissions import AgentOrOperatorWrites
from reconcile_app.api.serializers import EvidenceInput, EvidenceOutput, MemoryInput, MemoryOutput
from reconcile_app.filtersets import EvidenceFilterSet, MemoryFilterSet
from reconcile_app.models import EvidenceEntry, MemoryRecord
from reconcile_app.request_id import request_id_of
from reconcile_app.selectors.ledger import (
    evidence_get,
    evidence_visible_to,
    memories_visible_to,
    memories_with_promotion,
    memory_get,
)
from reconcile_app.services.evidence import evidence_attest
from reconcile_app.services.memory import memory_admit
from reconcile_app.services.principals import principal_acting

PROBLEM = OpenApiResponse(description="problem+json with a stable `code`")


class EvidenceListView(generics.ListAPIView):
    """The evidence ledger. Entries are appended, never updated or deleted."""

    permission_classes = [AgentOrOperatorWrites]
    serializer_class = EvidenceOutput
    filter_backends = [DjangoFilterBackend]
    filterset_class = EvidenceFilterSet
    queryset = EvidenceEntry.objects.none()  # for the schema; requests use get_queryset

    def get_queryset(self) -> QuerySet[EvidenceEntry]:
        return evidence_visible_to(self.request.user)

    @extend_schema(
        request=EvidenceInput,
        responses={201: EvidenceOutput, 400: PROBLEM, 403: PROBLEM, 409: PROBLEM, 422: PROBLEM},
    )
    def post(self, request: Request) -> Response:
        payload = EvidenceInput(data=request.data)
        payload.is_valid(raise_exception=True)
        entry = evidence_attest(
            principal=principal_acting(request.user, request.auth),
            request_id=request_id_of(request),
            **payload.validated_data,
        )
        return Response(EvidenceOutput(entry).data, status=status.HTTP_201_CREATED)


class EvidenceDetailView(generics.RetrieveAPIView):
    """One entry. PUT, PATCH and DELETE answer 405: the ledger is append-only."""

    permission_classes = [AgentOrOperatorWrites]
    serializer_class = EvidenceOutput

    def get_object(self) -> EvidenceEntry:
        return evidence_get(user=self.request.user, evidence_id=self.kwargs["evidence_id"])


class MemoryListView(generics.ListAPIView):
    permission_classes = [AgentOrOperatorWrites]
    serializer_class = MemoryOutput
    filter_backends = [DjangoFilterBackend]
    filterset_class = MemoryFilterSet
    queryset = MemoryRecord.objects.none()  # for the schema; requests use get_queryset

    def get_queryset(self) -> QuerySet[MemoryRecord]:
        return memories_with_promotion(memories_visible_to(self.request.user))

    @extend_schema(
        request=MemoryInput,
        responses={201: MemoryOutput, 400: PROBLEM, 403: PROBLEM, 409: PROBLEM, 423: PROBLEM},
    )
    def post(self, request: Request) -> Response:
        payload = MemoryInput(data=request.data)
        payload.is_valid(raise_exception=True)
        data: dict[str, Any] = payload.validated_data
        record = memory_admit(
            agent=principal_acting(request.user, request.auth),
            request_id=request_id_of(request),
            **data,
        )
        return Response(MemoryOutput(record).data, status=status.HTTP_201_CREATED)


class MemoryDetailView(generics.RetrieveAPIView):
    permission_classes = [AgentOrOperatorWrites]
    serializer_class = MemoryOutput

    def get_object(self) -> MemoryRecord:
        return memory_get(user=self.request.user, memory_id=self.kwargs["memory_id"])
