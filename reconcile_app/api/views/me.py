"""`GET /api/v1/me`: the caller's principal or user, role and what it may do."""

from __future__ import annotations

from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from reconcile_app.api.openapi import api_operation
from reconcile_app.choices import PrincipalKind, Role
from reconcile_app.selectors.principals import principal_profile
from reconcile_app.services.principals import principal_acting


class MyDecisionClassOutput(serializers.Serializer):
    """A decision class the caller may reconcile, and what it may do under it."""

    decision_class = serializers.CharField()
    active_version = serializers.CharField(help_text="the version a reconcile is served under")
    actions = serializers.ListField(
        child=serializers.CharField(), help_text="the actions it may commit (`*`: any)"
    )


class MeOutput(serializers.Serializer):
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=PrincipalKind.choices)
    roles = serializers.ListField(child=serializers.ChoiceField(choices=Role.choices))
    capabilities = serializers.ListField(
        child=serializers.CharField(),
        help_text="as granted: DECISION_CLASS:ACTION, attest:SOURCE, fact:PATTERN",
    )
    attests = serializers.ListField(
        child=serializers.CharField(), help_text="the sources its `attest:` capabilities name"
    )
    fact_patterns = serializers.ListField(
        child=serializers.CharField(), help_text="the fact keys it may write (globs)"
    )
    decision_classes = MyDecisionClassOutput(many=True)


class MeView(APIView):
    """Who the caller is, its role, its capabilities and the decision classes it may
    reconcile, each with the version a reconcile is served under."""

    @api_operation(
        operation_id="me_get",
        summary="Who am I, and what may I do",
        tag="me",
        responses={200: MeOutput},
    )
    def get(self, request: Request) -> Response:
        return Response(principal_profile(principal_acting(request.user, request.auth)))
