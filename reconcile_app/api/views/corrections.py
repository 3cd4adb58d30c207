"""POST /api/v1/corrections: revoke or supersede evidence and report the blast radius."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from lineage_app.selectors.blast import blast_radius
from reconcile_app.api.permissions import IsOperator, PeopleOnly
from reconcile_app.api.serializers import CorrectionInput, EvidenceOutput
from reconcile_app.canonical import rfc3339
from reconcile_app.choices import CorrectionStatus
from reconcile_app.models import Correction
from reconcile_app.request_id import request_id_of
from reconcile_app.selectors.corrections import correction_get
from reconcile_app.selectors.lineage import REVIEW_KINDS, evidence_roots
from reconcile_app.services.corrections import correction_create

PROBLEM = OpenApiResponse(description="problem+json with a stable `code`")
LIST_LIMIT = 500


def correction_body(correction: Correction) -> dict[str, Any]:
    pairs = evidence_roots(evidence_id=correction.corrected.evidence_id)
    to_review = {
        f"{kind}s": [
            node["ref"] for node in blast_radius(pairs, kinds=[kind], limit=LIST_LIMIT).nodes
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


class CorrectionCreateView(APIView):
    permission_classes = [IsOperator]

    @extend_schema(
        request=CorrectionInput,
        responses={201: None, 202: None, 400: PROBLEM, 403: PROBLEM, 404: PROBLEM, 409: PROBLEM},
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
    permission_classes = [PeopleOnly]

    @extend_schema(responses={200: None, 404: PROBLEM})
    def get(self, request: Request, correction_id: str) -> Response:
        return Response(correction_body(correction_get(correction_id=correction_id)))
