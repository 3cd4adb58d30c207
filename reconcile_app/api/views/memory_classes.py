"""The declared memory classes: what an agent may write, and under which kind's rules."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import extend_schema_view
from rest_framework import generics
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from reconcile_app.api.memory_class_serializers import MemoryClassOutput
from reconcile_app.api.openapi import api_operation, identifier_path
from reconcile_app.filtersets import MemoryClassFilterSet
from reconcile_app.limits import identifier_check
from reconcile_app.models import MemoryClass
from reconcile_app.selectors.memory_classes import (
    memory_class_view,
    memory_class_views,
    memory_classes,
)


@extend_schema_view(
    get=api_operation(
        operation_id="memory_classes_list",
        summary="List memory classes",
        tag="memory-classes",
        description="Every declared class, with the caller's counts of its memories by status.",
    )
)
class MemoryClassListView(generics.ListAPIView):
    serializer_class = MemoryClassOutput
    filter_backends = [DjangoFilterBackend]
    filterset_class = MemoryClassFilterSet
    queryset = MemoryClass.objects.none()  # for the schema; requests use get_queryset

    def get_queryset(self) -> QuerySet[MemoryClass]:
        return memory_classes()

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        # Counts for the page shown only: two queries, however many classes or memories.
        views = memory_class_views(classes=page or [], user=request.user)
        return self.get_paginated_response(MemoryClassOutput(views, many=True).data)


class MemoryClassDetailView(APIView):
    """One declared class: its kind's rules and the caller's counts of its memories."""

    @api_operation(
        operation_id="memory_class_get",
        summary="Get a memory class",
        tag="memory-classes",
        parameters=[identifier_path("name", "the class name")],
        responses={200: MemoryClassOutput},
        problems={400: ["invalid_identifier"], 404: ["memory_class_not_found"]},
    )
    def get(self, request: Request, name: str) -> Response:
        identifier_check(name, "memory_class")
        return Response(MemoryClassOutput(memory_class_view(name=name, user=request.user)).data)
