"""Quarantines: operators create and lift them; every role can see them."""

from __future__ import annotations

from django.db.models import QuerySet
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import extend_schema_view
from rest_framework import generics, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from reconcile_app.api.openapi import api_operation, identifier_path
from reconcile_app.api.permissions import IsOperator, ReadStaffWriteOperator
from reconcile_app.api.serializers import (
    QuarantineInput,
    QuarantineLiftInput,
    QuarantineOutput,
)
from reconcile_app.filtersets import QuarantineFilterSet
from reconcile_app.models import Quarantine
from reconcile_app.request_id import request_id_of
from reconcile_app.selectors.quarantine import console_quarantine, console_quarantine_history
from reconcile_app.services.quarantine import quarantine_create, quarantine_lift

QUARANTINE = identifier_path("quarantine_id")
OPERATORS = {403: ["people_only", "forbidden"]}


@extend_schema_view(
    get=api_operation(
        operation_id="quarantines_list",
        summary="List quarantines",
        tag="quarantines",
        description="Quarantines, newest first, with what each affects (people in a role).",
        problems={403: ["people_only"]},
    )
)
class QuarantineListView(generics.ListAPIView):
    permission_classes = [ReadStaffWriteOperator]
    serializer_class = QuarantineOutput
    filter_backends = [DjangoFilterBackend]
    filterset_class = QuarantineFilterSet
    queryset = Quarantine.objects.none()  # for the schema; requests use get_queryset

    def get_queryset(self) -> QuerySet[Quarantine]:
        return console_quarantine_history()

    @api_operation(
        operation_id="quarantine_create",
        summary="Quarantine a source, a memory class or one memory",
        tag="quarantines",
        description="202 while what it affects is counted (`status: applying`); poll the "
        "quarantine until `applied`.",
        request=QuarantineInput,
        responses={202: QuarantineOutput},
        problems={
            **OPERATORS,
            400: [
                "invalid_identifier",
                "unknown_source",
                "invalid_target",
                "unknown_memory",
                "reason_required",
                "invalid_scope",
                "invalid_ends_at",
                "invalid_since",
            ],
            409: ["already_quarantined"],
        },
    )
    def post(self, request: Request) -> Response:
        payload = QuarantineInput(data=request.data)
        payload.is_valid(raise_exception=True)
        quarantine = quarantine_create(
            actor=request.user, request_id=request_id_of(request), **payload.validated_data
        )
        return Response(QuarantineOutput(quarantine).data, status=status.HTTP_202_ACCEPTED)


class QuarantineDetailView(APIView):
    """One quarantine: `applied` with its `affected` counts once they are known."""

    permission_classes = [ReadStaffWriteOperator]

    @api_operation(
        operation_id="quarantine_get",
        summary="Get a quarantine",
        tag="quarantines",
        parameters=[QUARANTINE],
        responses={200: QuarantineOutput},
        problems={403: ["people_only"], 404: ["quarantine_not_found"]},
    )
    def get(self, request: Request, quarantine_id: str) -> Response:
        return Response(QuarantineOutput(console_quarantine(quarantine_id=quarantine_id)).data)


class QuarantineLiftView(APIView):
    """Operators lift a quarantine, with a reason."""

    permission_classes = [IsOperator]

    @api_operation(
        operation_id="quarantine_lift",
        summary="Lift a quarantine",
        tag="quarantines",
        parameters=[QUARANTINE],
        request=QuarantineLiftInput,
        responses={200: QuarantineOutput},
        problems={
            **OPERATORS,
            400: ["reason_required"],
            404: ["quarantine_not_found"],
            409: ["not_active"],
        },
    )
    def post(self, request: Request, quarantine_id: str) -> Response:
        payload = QuarantineLiftInput(data=request.data)
        payload.is_valid(raise_exception=True)
        quarantine_lift(
            quarantine_id=quarantine_id,
            reason=payload.validated_data["reason"],
            actor=request.user,
            request_id=request_id_of(request),
        )
        return Response(QuarantineOutput(console_quarantine(quarantine_id=quarantine_id)).data)
