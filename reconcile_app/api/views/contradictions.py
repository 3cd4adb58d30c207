from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import extend_schema_view
from rest_framework import generics
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from reconcile_app.api.openapi import api_operation
from reconcile_app.api.permissions import IsOperator, ReadStaffWriteOperator
from reconcile_app.api.serializers import ResolveContradictionInput
from reconcile_app.api.snapshot_serializers import ContradictionOutput
from reconcile_app.filtersets import ContradictionFilterSet
from reconcile_app.models import Contradiction
from reconcile_app.request_id import request_id_of
from reconcile_app.selectors.contradictions import (
    console_contradictions,
    contradiction_representation,
)
from reconcile_app.services.contradictions import contradiction_resolve


@extend_schema_view(
    get=api_operation(
        operation_id="contradictions_list",
        summary="List contradictions",
        tag="contradictions",
        description="Contradictions preserved as rows, newest first: both values, both "
        "sources (people in a role).",
        problems={403: ["people_only"]},
    )
)
class ContradictionListView(generics.ListAPIView):
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
    """Operators close a contradiction with a note."""

    permission_classes = [IsOperator]

    @api_operation(
        operation_id="contradiction_resolve",
        summary="Resolve a contradiction",
        tag="contradictions",
        request=ResolveContradictionInput,
        responses={200: ContradictionOutput},
        problems={
            400: ["note_required"],
            403: ["people_only", "forbidden"],
            404: ["contradiction_not_found"],
            409: ["already_resolved"],
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
