from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from reconcile_app.api.permissions import IsOperator, ReadStaffWriteOperator
from reconcile_app.api.serializers import ContradictionOutput, ResolveContradictionInput
from reconcile_app.filtersets import ContradictionFilterSet
from reconcile_app.models import Contradiction
from reconcile_app.request_id import request_id_of
from reconcile_app.selectors.contradictions import (
    console_contradictions,
    contradiction_representation,
)
from reconcile_app.services.contradictions import contradiction_resolve

PROBLEM = OpenApiResponse(description="problem+json with a stable `code`")


class ContradictionListView(generics.ListAPIView):
    """Contradictions preserved as rows: both values, both sources."""

    permission_classes = [ReadStaffWriteOperator]
    serializer_class = ContradictionOutput
    filter_backends = [DjangoFilterBackend]
    filterset_class = ContradictionFilterSet
    queryset = Contradiction.objects.none()  # for the schema; requests use get_queryset

    def get_queryset(self) -> QuerySet[Contradiction]:
        return console_contradictions()

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        return self.get_paginated_response(
            [contradiction_representation(row, row.snapshot.snapshot_id) for row in page or []]
        )


class ContradictionResolveView(APIView):
    permission_classes = [IsOperator]

    @extend_schema(
        request=ResolveContradictionInput,
        responses={
            200: ContradictionOutput,
            400: PROBLEM,
            403: PROBLEM,
            404: PROBLEM,
            409: PROBLEM,
        },
    )
    def post(self, request: Request, contradiction_id: int) -> Response:
        payload = ResolveContradictionInput(data=request.data)
        payload.is_valid(raise_exception=True)
        row = contradiction_resolve(
            contradiction_id=contradiction_id,
            actor=request.user,
            note=payload.validated_data["note"],
            request_id=request_id_of(request),
        )
        return Response(contradiction_representation(row, row.snapshot.snapshot_id))
