"""Facts by rule and the escalations that ambiguity opens."""

from __future__ import annotations

from datetime import date

from django.db.models import QuerySet
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import generics
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from reconcile_app.api.permissions import IsReviewer
from reconcile_app.api.problems import problem_response
from reconcile_app.api.serializers import (
    EscalationDecisionInput,
    EscalationOutput,
    FactOutput,
    MemoryOutput,
)
from reconcile_app.errors import ValidationFailed
from reconcile_app.filtersets import EscalationFilterSet
from reconcile_app.limits import identifier_check
from reconcile_app.models import Escalation
from reconcile_app.request_id import request_id_of
from reconcile_app.selectors.escalations import escalation_get, escalations_visible_to
from reconcile_app.services import facts
from reconcile_app.services.escalations import escalation_decide
from reconcile_app.services.memory import fact_today
from reconcile_app.services.principals import principal_acting

PROBLEM = OpenApiResponse(description="problem+json with a stable `code`")
FACT_STATUS = {
    facts.NO_CURRENT_RECORD: (404, "No current record"),
    facts.AUTHORITY_AMBIGUOUS: (409, "Authority ambiguous"),
    facts.OWNER_MISSING: (422, "Owner missing"),
    facts.AUTHORITY_UNAVAILABLE: (503, "Current authority unavailable"),
    facts.MEMORY_CLASS_QUARANTINED: (423, "Memory class quarantined"),
}
DETAILS = {
    facts.NO_CURRENT_RECORD: "no record is current for the owner's revision on that date",
    facts.AUTHORITY_AMBIGUOUS: "more than one record is current for the owner's revision",
    facts.OWNER_MISSING: "a current record has no owner",
    facts.AUTHORITY_UNAVAILABLE: "the owner's system of record could not be asked",
    facts.MEMORY_CLASS_QUARANTINED: "current records of this key are in a quarantined class",
}


class FactCurrentView(APIView):
    """select_current(fact_key, on): the one eligible record, or a code and its candidates."""

    @extend_schema(
        parameters=[OpenApiParameter("on", str, description="YYYY-MM-DD (default: today)")],
        responses={
            200: FactOutput,
            404: PROBLEM,
            409: PROBLEM,
            422: PROBLEM,
            503: PROBLEM,
            400: PROBLEM,
            423: PROBLEM,
        },
    )
    def get(self, request: Request, fact_key: str) -> Response:
        identifier_check(fact_key, "fact_key")
        raw_on = request.query_params.get("on")
        try:
            on = date.fromisoformat(raw_on) if raw_on else fact_today()
        except ValueError as exc:
            raise ValidationFailed("`on` must be a date YYYY-MM-DD", code="invalid_date") from exc
        answer = facts.fact_current(
            fact_key=fact_key, on=on, requested_by=principal_acting(request.user, request.auth)
        )
        selection = answer.selection
        authority = (
            {
                "source": answer.authority_source,
                "status": answer.authority.status,
                "owner": answer.authority.owner,
                "source_revision": answer.authority.source_revision,
            }
            if answer.authority
            else None
        )
        escalation_id = answer.escalation.escalation_id if answer.escalation else None
        if selection.code == facts.OK:
            return Response(
                {
                    "code": facts.OK,
                    "fact": MemoryOutput(selection.fact).data,
                    "authority": authority,
                    "candidates": selection.candidates,
                    "escalation_id": None,
                    "on": on.isoformat(),
                }
            )
        status_code, title = FACT_STATUS[selection.code]
        return problem_response(
            status_code=status_code,
            code=selection.code,
            title=title,
            detail=DETAILS[selection.code],
            fact_key=fact_key,
            on=on.isoformat(),
            candidates=selection.candidates,
            escalation_id=escalation_id,
            authority=authority,
        )


class EscalationListView(generics.ListAPIView):
    serializer_class = EscalationOutput
    filter_backends = [DjangoFilterBackend]
    filterset_class = EscalationFilterSet
    queryset = Escalation.objects.none()  # for the schema; requests use get_queryset

    def get_queryset(self) -> QuerySet[Escalation]:
        return escalations_visible_to(self.request.user)


class EscalationDetailView(APIView):
    @extend_schema(responses={200: EscalationOutput, 404: PROBLEM})
    def get(self, request: Request, escalation_id: str) -> Response:
        escalation = escalation_get(user=request.user, escalation_id=escalation_id)
        return Response(EscalationOutput(escalation).data)


class EscalationDecisionView(APIView):
    permission_classes = [IsReviewer]
    approve = True

    @extend_schema(
        request=EscalationDecisionInput,
        responses={200: EscalationOutput, 400: PROBLEM, 403: PROBLEM, 404: PROBLEM, 409: PROBLEM},
    )
    def post(self, request: Request, escalation_id: str) -> Response:
        payload = EscalationDecisionInput(data=request.data)
        payload.is_valid(raise_exception=True)
        escalation = escalation_decide(
            escalation_id=escalation_id,
            reviewer=request.user,
            approve=self.approve,
            rationale=payload.validated_data["rationale"],
            selected_ref=payload.validated_data["selected_ref"],
            request_id=request_id_of(request),
        )
        return Response(EscalationOutput(escalation).data)
