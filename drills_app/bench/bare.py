"""The bare DRF endpoint `bench http` compares the gate against, and the URLs serving both.

`POST /bench/bare` parses and validates a reconcile request body with the gate's own
serializer, as stock DRF builds it, and answers 200: the cost of Django, DRF and JSON on
this server, with no authentication, throttle, owner read or write. The ratio of the gate's
throughput to this endpoint's is what stays comparable across noisy machines.
"""

from __future__ import annotations

from django.urls import path
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.urls import urlpatterns as product_urlpatterns
from reconcile_app.api.snapshot_serializers import ReconcileInput


class StockReconcileInput(ReconcileInput):
    """The gate's request body with DRF's stock field handling: a fresh deep copy of the
    declared fields for every instance, as any DRF serializer makes. The gate's own
    `ReconcileInput` skips that copy (reconcile_app/api/kept_fields.py); the bare endpoint
    stands for what a plain DRF endpoint costs, so it keeps it."""

    fields = serializers.Serializer.fields


class BareReconcileView(APIView):
    authentication_classes: list[type] = []
    permission_classes = [AllowAny]
    throttle_classes: list[type] = []
    schema = None

    def post(self, request: Request) -> Response:
        payload = StockReconcileInput(data=request.data)
        payload.is_valid(raise_exception=True)
        return Response({"valid": True, "claims": len(payload.validated_data["claims"])})


urlpatterns = [*product_urlpatterns, path("bench/bare", BareReconcileView.as_view())]
