"""Quarantines: operators create and lift them; every role can see them."""

from __future__ import annotations

from django.db.models import QuerySet
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

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

PROBLEM = OpenApiResponse(description="problem+json with a stable `code`")


class QuarantineListView(generics.ListAPIView):
    permission_classes = [ReadStaffWriteOperator]
    serializer_class = QuarantineOutput
    filter_backends = [DjangoFilterBackend]
    filterset_class = QuarantineFilterSet
    queryset = Quarantine.objects.none()  # for the schema; requests use get_queryset

    def get_queryset(self) -> QuerySet[Quarantine]:
        return console_quarantine_history()

    @extend_schema(
        request=QuarantineInput,
        responses={202: QuarantineOutput, 400: PROBLEM, 403: PROBLEM, 409: PROBLEM},
    )
    def post(self, request: Request) -> Response:
        payload = QuarantineInput(data=request.data)
        payload.is_valid(raise_exception=True)
        quarantine = quarantine_create(
            actor=request.user, request_id=request_id_of(request), **payload.validated_data
        )
        return Response(QuarantineOutput(quarantine).data, status=status.HTTP_202_ACCEPTED)


class QuarantineDetailView(APIView):
    permission_classes = [ReadStaffWriteOperator]

    @extend_schema(responses={200: QuarantineOutput, 404: PROBLEM})
    def get(self, request: Request, quarantine_id: str) -> Response:
        return Response(QuarantineOutput(console_quarantine(quarantine_id=quarantine_id)).data)


class QuarantineLiftView(APIView):
    permission_classes = [IsOperator]

    @extend_schema(
        request=QuarantineLiftInput,
        responses={200: QuarantineOutput, 400: PROBLEM, 403: PROBLEM, 404: PROBLEM, 409: PROBLEM},
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
