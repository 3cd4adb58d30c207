"""Effects: commit against the version read, idempotent retries, readbacks, resolutions."""

from __future__ import annotations

from django.db.models import QuerySet
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from reconcile_app.api.effect_serializers import (
    EffectDetailOutput,
    EffectEscalateInput,
    EffectInput,
    EffectOutput,
    EffectResolveInput,
)
from reconcile_app.api.permissions import IsOperator
from reconcile_app.api.problems import problem_response
from reconcile_app.api.serializers import EscalationOutput
from reconcile_app.choices import EffectStatus
from reconcile_app.filtersets import EffectFilterSet
from reconcile_app.models import Effect
from reconcile_app.request_id import request_id_of
from reconcile_app.selectors.effects import effect_get, effects_visible_to
from reconcile_app.services.effects import (
    effect_commit,
    effect_request_check,
    effect_resolve_manually,
)
from reconcile_app.services.escalations import escalation_open_for_effect
from reconcile_app.services.principals import principal_acting

PROBLEM = OpenApiResponse(description="problem+json with a stable `code`")
REJECTION_STATUS = {"version_changed": 412, "owner_unavailable": 503, "idempotency_key_reused": 422}


def _answer(effect: Effect, replayed: bool) -> Response:
    body = EffectOutput(effect).data
    headers = {"Idempotent-Replayed": "true"} if replayed else {}
    if effect.status == EffectStatus.REJECTED:
        code = effect.outcome.get("code", "rejected")
        response = problem_response(
            status_code=REJECTION_STATUS.get(code, 409),
            code=code,
            title="Effect rejected by the owner",
            detail=effect.outcome.get("detail", ""),
            expected=effect.outcome.get("expected"),
            found=effect.outcome.get("found"),
            idempotency_key=effect.idempotency_key,
            effect=body,
        )
    elif effect.status == EffectStatus.UNKNOWN:
        response = Response(body, status=status.HTTP_202_ACCEPTED)
    else:
        response = Response(
            body, status=status.HTTP_200_OK if replayed else status.HTTP_201_CREATED
        )
    for name, value in headers.items():
        response[name] = value
    return response


class EffectListView(generics.ListAPIView):
    """Effects, newest first; `?status=unknown` is the triage queue."""

    serializer_class = EffectOutput
    filter_backends = [DjangoFilterBackend]
    filterset_class = EffectFilterSet
    queryset = Effect.objects.none()

    def get_queryset(self) -> QuerySet[Effect]:
        return effects_visible_to(self.request.user)

    @extend_schema(
        request=EffectInput,
        parameters=[
            OpenApiParameter("Idempotency-Key", str, OpenApiParameter.HEADER, required=True),
            OpenApiParameter("If-Match", str, OpenApiParameter.HEADER, required=True),
        ],
        responses={
            200: EffectOutput,
            201: EffectOutput,
            202: EffectOutput,
            400: PROBLEM,
            403: PROBLEM,
            404: PROBLEM,
            409: PROBLEM,
            412: PROBLEM,
            422: PROBLEM,
            423: PROBLEM,
            428: PROBLEM,
            503: PROBLEM,
        },
    )
    def post(self, request: Request) -> Response:
        payload = EffectInput(data=request.data)
        payload.is_valid(raise_exception=True)
        result = effect_commit(
            principal=principal_acting(request.user, request.auth),
            idempotency_key=request.headers.get("Idempotency-Key"),
            if_match=request.headers.get("If-Match"),
            **payload.validated_data,
        )
        return _answer(result.effect, result.replayed)


class EffectDetailView(APIView):
    @extend_schema(responses={200: EffectDetailOutput, 404: PROBLEM})
    def get(self, request: Request, key: str) -> Response:
        return Response(EffectDetailOutput(effect_get(user=request.user, idempotency_key=key)).data)


class EffectReadbackView(APIView):
    permission_classes = [IsOperator]

    @extend_schema(
        request=None, responses={202: EffectOutput, 403: PROBLEM, 404: PROBLEM, 409: PROBLEM}
    )
    def post(self, request: Request, key: str) -> Response:
        effect = effect_request_check(
            idempotency_key=key, actor=request.user, request_id=request_id_of(request)
        )
        return Response(EffectOutput(effect).data, status=status.HTTP_202_ACCEPTED)


class EffectResolveView(APIView):
    permission_classes = [IsOperator]

    @extend_schema(
        request=EffectResolveInput,
        responses={200: EffectOutput, 400: PROBLEM, 403: PROBLEM, 404: PROBLEM, 409: PROBLEM},
    )
    def post(self, request: Request, key: str) -> Response:
        payload = EffectResolveInput(data=request.data)
        payload.is_valid(raise_exception=True)
        effect = effect_resolve_manually(
            idempotency_key=key,
            actor=request.user,
            request_id=request_id_of(request),
            **payload.validated_data,
        )
        return Response(
            EffectOutput(effect_get(user=request.user, idempotency_key=effect.idempotency_key)).data
        )


class EffectEscalateView(APIView):
    """Operators hand an unresolved outcome to the owner as an escalation."""

    permission_classes = [IsOperator]

    @extend_schema(
        request=EffectEscalateInput,
        responses={201: EscalationOutput, 400: PROBLEM, 403: PROBLEM, 404: PROBLEM, 409: PROBLEM},
    )
    def post(self, request: Request, key: str) -> Response:
        payload = EffectEscalateInput(data=request.data)
        payload.is_valid(raise_exception=True)
        escalation = escalation_open_for_effect(
            idempotency_key=key,
            actor=request.user,
            reason=payload.validated_data["reason"],
            request_id=request_id_of(request),
        )
        return Response(EscalationOutput(escalation).data, status=status.HTTP_201_CREATED)
