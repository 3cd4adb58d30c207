"""`GET /api/v1/me`: the caller's principal or user, role and what it may do."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from reconcile_app.selectors.principals import principal_profile
from reconcile_app.services.principals import principal_acting

PROBLEM = OpenApiResponse(description="problem+json with a stable `code`")


class DecisionClassOutput(serializers.Serializer):
    decision_class = serializers.CharField()
    active_version = serializers.CharField()
    actions = serializers.ListField(child=serializers.CharField())


class MeOutput(serializers.Serializer):
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=["agent", "person"])
    roles = serializers.ListField(child=serializers.CharField())
    capabilities = serializers.ListField(child=serializers.CharField())
    attests = serializers.ListField(child=serializers.CharField())
    fact_patterns = serializers.ListField(child=serializers.CharField())
    decision_classes = DecisionClassOutput(many=True)


class MeView(APIView):
    """Who the caller is, its role, its capabilities and the decision classes it may
    reconcile, each with the version a reconcile is served under."""

    @extend_schema(responses={200: MeOutput, 401: PROBLEM})
    def get(self, request: Request) -> Response:
        return Response(principal_profile(principal_acting(request.user, request.auth)))
