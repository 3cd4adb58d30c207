"""Evidence (append-only) and memory admission."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import extend_schema_view
from rest_framework import generics, status
from rest_framework.request import Request
from rest_framework.response import Response

from reconcile_app.api.epoch_views import EpochPinnedMixin
from reconcile_app.api.openapi import api_operation, identifier_path
from reconcile_app.api.permissions import AgentOrOperatorWrites
from reconcile_app.api.serializers import (
    EvidenceInput,
    EvidenceOutput,
    MemoryDetailOutput,
    MemoryInput,
    MemoryOutput,
)
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


@extend_schema_view(
    get=api_operation(
        operation_id="evidence_list",
        summary="List evidence entries",
        tag="evidence",
        description="The evidence ledger, in order: entries are appended, never updated or "
        "deleted. An agent sees the entries it attested; people in a role see all.",
    )
)
class EvidenceListView(EpochPinnedMixin, generics.ListAPIView):
    # As memory writes: pinned before the key is authenticated (services/evidence.py).
    permission_classes = [AgentOrOperatorWrites]
    serializer_class = EvidenceOutput
    filter_backends = [DjangoFilterBackend]
    filterset_class = EvidenceFilterSet
    queryset = EvidenceEntry.objects.none()  # for the schema; requests use get_queryset

    def get_queryset(self) -> QuerySet[EvidenceEntry]:
        return evidence_visible_to(self.request.user)

    @api_operation(
        operation_id="evidence_attest",
        summary="Attest an evidence entry",
        tag="evidence",
        description="Append an entry to the ledger. Needs `attest:<source>` (and of the "
        "superseded entry's source); corrections come through `POST /api/v1/corrections`.",
        request=EvidenceInput,
        responses={201: EvidenceOutput},
        problems={
            400: ["invalid_identifier", "unknown_reference", "invalid_kind", "invalid_evidence_id"],
            403: ["attestation_not_allowed", "correction_requires_operator", "forbidden"],
            409: ["evidence_id_taken"],
            422: ["observed_in_future", "value_too_large"],
        },
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


@extend_schema_view(
    get=api_operation(
        operation_id="evidence_get",
        summary="Get an evidence entry",
        tag="evidence",
        description="One entry. PUT, PATCH and DELETE answer 405: the ledger is append-only.",
        parameters=[identifier_path("evidence_id")],
        problems={404: ["evidence_not_found"]},
    )
)
class EvidenceDetailView(generics.RetrieveAPIView):
    permission_classes = [AgentOrOperatorWrites]
    serializer_class = EvidenceOutput

    def get_object(self) -> EvidenceEntry:
        return evidence_get(user=self.request.user, evidence_id=self.kwargs["evidence_id"])


@extend_schema_view(
    get=api_operation(
        operation_id="memories_list",
        summary="List memories",
        tag="memories",
        description="Memory records with their status (an agent's own; all for people in a "
        "role); `?status=suggested` lists what awaits review.",
    )
)
class MemoryListView(EpochPinnedMixin, generics.ListAPIView):
    # A write pins the epochs before its key is authenticated: access taken back after
    # that moves them, and the write checks it again (services/memory._writer_held).
    permission_classes = [AgentOrOperatorWrites]
    serializer_class = MemoryOutput
    filter_backends = [DjangoFilterBackend]
    filterset_class = MemoryFilterSet
    queryset = MemoryRecord.objects.none()  # for the schema; requests use get_queryset

    def get_queryset(self) -> QuerySet[MemoryRecord]:
        return memories_with_promotion(memories_visible_to(self.request.user))

    @api_operation(
        operation_id="memory_write",
        summary="Write a memory",
        tag="memories",
        description="Admit a memory of a declared class, with what it was derived from. A "
        "class under review admits it `suggested` (never in force) until a reviewer "
        "promotes it.",
        request=MemoryInput,
        responses={201: MemoryOutput},
        problems={
            400: [
                "invalid_identifier",
                "derivation_missing",
                "target_missing",
                "unknown_reference",
                "invalid_memory_id",
                "supersession_mismatch",
            ],
            403: ["fact_write_not_allowed", "forbidden"],
            409: [
                "supersession_conflict",
                "memory_id_taken",
                "derivation_not_admitted",
                "supersession_needs_review",
            ],
            422: [
                "memory_class_unknown",
                "memory_kind_mismatch",
                "consent_missing",
                "valid_until_past",
                "written_in_future",
                "value_too_large",
            ],
            423: ["memory_class_quarantined", "fact_key_frozen"],
        },
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


@extend_schema_view(
    get=api_operation(
        operation_id="memory_get",
        summary="Get a memory",
        tag="memories",
        description="One memory record, every field, with its status and the corrections of "
        "its grounds since it was written (`grounds_corrected`).",
        parameters=[identifier_path("memory_id")],
        problems={404: ["memory_not_found"]},
    )
)
class MemoryDetailView(generics.RetrieveAPIView):
    permission_classes = [AgentOrOperatorWrites]
    serializer_class = MemoryDetailOutput

    def get_object(self) -> MemoryRecord:
        return memory_get(user=self.request.user, memory_id=self.kwargs["memory_id"])
