from __future__ import annotations

from typing import Any

from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from reconcile_app.api.serializers import (
    ReconcileInput,
    ReplayInput,
    ReplayOutput,
    SnapshotOutput,
)
from reconcile_app.filtersets import SnapshotFilterSet
from reconcile_app.models import DecisionSnapshot
from reconcile_app.reconciliation.types import NOT_PROPOSED
from reconcile_app.selectors.snapshots import (
    snapshot_get,
    snapshot_representation,
    snapshots_visible_to,
)
from reconcile_app.services.principals import principal_acting
from reconcile_app.services.recall import claim_draft
from reconcile_app.services.reconcile import ReconcileRequest, snapshot_issue
from reconcile_app.services.replay import snapshot_replay

PROBLEM = OpenApiResponse(description="problem+json with a stable `code`")


class ReconcileView(APIView):
    """Run the reconciliation protocol for one proposed action and issue a snapshot."""

    @extend_schema(
        request=ReconcileInput,
        responses={
            201: SnapshotOutput,
            400: PROBLEM,
            401: PROBLEM,
            403: PROBLEM,
            404: PROBLEM,
            409: PROBLEM,
            422: PROBLEM,
        },
    )
    def post(self, request: Request) -> Response:
        payload = ReconcileInput(data=request.data)
        payload.is_valid(raise_exception=True)
        data: dict[str, Any] = payload.validated_data
        # What a claim leaves out stays out: a recalled claim's record fills it in.
        claims = [claim_draft(item) for item in data["claims"]]
        snapshot = snapshot_issue(
            principal=principal_acting(request.user, request.auth),
            request=ReconcileRequest(
                subject=data["subject"],
                purpose=data["purpose"],
                decision_class=data["decision_class"],
                proposed_action=data["proposed_action"],
                contract_version=data["contract_version"],
                claims=claims,
                proposed_value=data.get("proposed_value", NOT_PROPOSED),
            ),
        )
        return Response(snapshot_representation(snapshot), status=status.HTTP_201_CREATED)


class SnapshotListView(generics.ListAPIView):
    """Snapshots, newest first. Agents see their own; people in a role see all."""

    serializer_class = SnapshotOutput
    filter_backends = [DjangoFilterBackend]
    filterset_class = SnapshotFilterSet

    queryset = DecisionSnapshot.objects.none()  # for the schema; requests use get_queryset

    def get_queryset(self) -> Any:
        return snapshots_visible_to(self.request.user)

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        return self.get_paginated_response([snapshot_representation(s) for s in page or []])


class SnapshotDetailView(APIView):
    @extend_schema(responses={200: SnapshotOutput, 404: PROBLEM})
    def get(self, request: Request, snapshot_id: str) -> Response:
        return Response(
            snapshot_representation(snapshot_get(user=request.user, snapshot_id=snapshot_id))
        )


class SnapshotReplayView(APIView):
    """Rebuild a snapshot as recorded (must match its hash) or under today's corrections."""

    @extend_schema(
        request=ReplayInput,
        responses={200: ReplayOutput, 400: PROBLEM, 404: PROBLEM},
    )
    def post(self, request: Request, snapshot_id: str) -> Response:
        payload = ReplayInput(data=request.data)
        payload.is_valid(raise_exception=True)
        snapshot = snapshot_get(user=request.user, snapshot_id=snapshot_id)
        result = snapshot_replay(snapshot=snapshot, mode=payload.validated_data["mode"])
        return Response(
            {
                "mode": result.mode,
                "exact": result.exact,
                "snapshot_id": result.snapshot_id,
                "original_hash": result.original_hash,
                "replayed_hash": result.replayed_hash,
                "differences": result.differences,
            }
        )
