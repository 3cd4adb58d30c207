from __future__ import annotations

from typing import Any

from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import extend_schema_view
from rest_framework import generics, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.http_metrics import request_arrival
from reconcile_app.api.epoch_views import EpochPinnedMixin
from reconcile_app.api.openapi import api_operation
from reconcile_app.api.snapshot_serializers import (
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

SNAPSHOT_NOT_FOUND = {404: ["snapshot_not_found"]}


class ReconcileView(EpochPinnedMixin, APIView):
    """Run the reconciliation protocol for one proposed action and issue a snapshot: read
    each field from its owner, judge the claims against state, decide by the contract's
    policy. The snapshot says how to act on it (`actions`: the field, the If-Match to send
    and the commit deadline of each action it authorises). Nothing is written on a refusal."""

    @api_operation(
        operation_id="reconcile",
        summary="Reconcile a proposed action and issue a snapshot",
        tag="reconcile",
        request=ReconcileInput,
        responses={201: SnapshotOutput},
        problems={
            400: [
                "invalid_identifier",
                "unknown_action",
                "proposed_action_missing",
                "too_many_claims",
                "unknown_reference",
            ],
            403: ["capability_missing", "purpose_mismatch"],
            404: ["unknown_decision_class"],
            409: ["quarantine_changed", "lineage_changed"],
            422: [
                "value_too_large",
                "contract_version_inactive",
                "claim_memory_mismatch",
                "claim_field_missing",
            ],
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
            arrived=request_arrival(request._request),
        )
        return Response(snapshot_representation(snapshot), status=status.HTTP_201_CREATED)


@extend_schema_view(
    get=api_operation(
        operation_id="snapshots_list",
        summary="List snapshots",
        tag="snapshots",
        description="Snapshots, newest first. Agents see their own; people in a role see all.",
    )
)
class SnapshotListView(generics.ListAPIView):
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
    """One snapshot (an agent's own; any for people in a role)."""

    @api_operation(
        operation_id="snapshot_get",
        summary="Get a snapshot",
        tag="snapshots",
        responses={200: SnapshotOutput},
        problems=SNAPSHOT_NOT_FOUND,
    )
    def get(self, request: Request, snapshot_id: str) -> Response:
        return Response(
            snapshot_representation(snapshot_get(user=request.user, snapshot_id=snapshot_id))
        )


class SnapshotReplayView(APIView):
    """Rebuild a snapshot as recorded (must match its hash) or under today's corrections."""

    @api_operation(
        operation_id="snapshot_replay",
        summary="Replay a snapshot as recorded or under today's corrections",
        tag="snapshots",
        request=ReplayInput,
        responses={200: ReplayOutput},
        problems={**SNAPSHOT_NOT_FOUND, 400: ["invalid_mode"]},
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
                "unavailable_sources": result.unavailable_sources,
                "inferred_ledger_seq": result.inferred_ledger_seq,
            }
        )
