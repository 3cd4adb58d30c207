"""/api/v1/corrections: operators revoke or supersede evidence and read the blast radius;
people list the corrections and read each."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import extend_schema_view
from rest_framework import generics, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from lineage_app.selectors.blast import blast_radius
from reconcile_app.api.openapi import api_operation, identifier_path
from reconcile_app.api.permissions import PeopleOnly, ReadStaffWriteOperator
from reconcile_app.api.serializers import (
    CorrectionInput,
    CorrectionListItemOutput,
    CorrectionOutput,
    EvidenceOutput,
)
from reconcile_app.canonical import rfc3339
from reconcile_app.choices import CorrectionStatus
from reconcile_app.filtersets import CorrectionFilterSet
from reconcile_app.models import Correction
from reconcile_app.request_id import request_id_of
from reconcile_app.selectors.corrections import correction_get, corrections_listed
from reconcile_app.selectors.lineage import REVIEW_KINDS, REVIEW_PLURALS, evidence_roots
from reconcile_app.services.corrections import correction_create

LIST_LIMIT = 500


def correction_body(correction: Correction) -> dict[str, Any]:
    """The correction and what it reached: its lists come from the lineage as it stood when
    the correction completed, as its counts and its taints do. What has come downstream of
    the entry since (a snapshot built on a later readback) is the lineage's to show
    (`/api/v1/lineage/evidence:{id}/descendants`): the correction did not reach it."""
    pairs = evidence_roots(evidence_id=correction.corrected.evidence_id)
    to_review = {
        REVIEW_PLURALS[kind]: [
            node["ref"]
            for node in blast_radius(
                pairs, as_of=correction.completed_at, kinds=[kind], limit=LIST_LIMIT
            ).nodes
        ]
        for kind in REVIEW_KINDS
    }
    return {
        "correction_id": correction.correction_id,
        "status": correction.status,
        "evidence_id": correction.corrected.evidence_id,
        "reason": correction.reason,
        "actor": correction.actor.username if correction.actor is not None else None,
        "created_at": rfc3339(correction.created_at),
        "completed_at": rfc3339(correction.completed_at),
        "correction": EvidenceOutput(correction.entry).data,
        "blast_radius": {
            "counts": correction.counts,
            "review": to_review,
            "listed_per_kind": LIST_LIMIT,
        },
    }


@extend_schema_view(
    get=api_operation(
        operation_id="corrections_list",
        summary="List corrections",
        tag="corrections",
        description="Corrections newest first: the entry each corrected (its subject, field "
        "and source), who made it and why, and how far it reached (`counts`); a correction's "
        "review lists are `GET /api/v1/corrections/{id}` (people in a role).",
        problems={403: ["people_only"]},
    )
)
class CorrectionsView(generics.ListAPIView):
    """People list the corrections; operators revoke an evidence entry (or supersede it with
    a `replacement`): every snapshot downstream is tainted and can no longer authorise a
    commit."""

    permission_classes = [ReadStaffWriteOperator]
    serializer_class = CorrectionListItemOutput
    filter_backends = [DjangoFilterBackend]
    filterset_class = CorrectionFilterSet
    queryset = Correction.objects.none()  # for the schema; requests use get_queryset

    def get_queryset(self) -> QuerySet[Correction]:
        return corrections_listed()

    @api_operation(
        operation_id="correction_create",
        summary="Correct an evidence entry",
        tag="corrections",
        request=CorrectionInput,
        responses={201: CorrectionOutput, 202: CorrectionOutput},
        problems={
            400: ["reason_required"],
            403: ["people_only", "forbidden"],
            404: ["evidence_not_found"],
            409: ["already_corrected", "replacement_required"],
            422: ["value_too_large", "observed_in_future"],
        },
    )
    def post(self, request: Request) -> Response:
        payload = CorrectionInput(data=request.data)
        payload.is_valid(raise_exception=True)
        correction = correction_create(
            actor=request.user, request_id=request_id_of(request), **payload.validated_data
        )
        # 202 while a large blast radius is still being computed by the worker.
        code = (
            status.HTTP_201_CREATED
            if correction.status == CorrectionStatus.COMPLETE
            else status.HTTP_202_ACCEPTED
        )
        return Response(
            correction_body(correction_get(correction_id=correction.correction_id)), status=code
        )


class CorrectionDetailView(APIView):
    """One correction and its blast radius (people in a role)."""

    permission_classes = [PeopleOnly]

    @api_operation(
        operation_id="correction_get",
        summary="Get a correction",
        tag="corrections",
        parameters=[identifier_path("correction_id")],
        responses={200: CorrectionOutput},
        problems={403: ["people_only"], 404: ["correction_not_found"]},
    )
    def get(self, request: Request, correction_id: str) -> Response:
        return Response(correction_body(correction_get(correction_id=correction_id)))
