"""Effects: commit against the version read, idempotent retries, readbacks, resolutions."""

from __future__ import annotations

from django.db.models import QuerySet
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import extend_schema_view
from rest_framework import generics, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from reconcile_app.api.effect_serializers import (
    EffectCompensateInput,
    EffectDetailOutput,
    EffectEscalateInput,
    EffectInput,
    EffectOutput,
    EffectResolveInput,
)
from reconcile_app.api.epoch_views import EpochPinnedMixin
from reconcile_app.api.openapi import (
    IDEMPOTENCY_KEY,
    IF_MATCH,
    api_operation,
    idempotent_replayed,
    identifier_path,
)
from reconcile_app.api.permissions import IsOperator
from reconcile_app.api.problem_serializers import EffectProblemOutput
from reconcile_app.api.problems import problem_response
from reconcile_app.api.serializers import EscalationOutput
from reconcile_app.choices import EffectStatus
from reconcile_app.filtersets import EffectFilterSet
from reconcile_app.models import Effect
from reconcile_app.request_id import request_id_of
from reconcile_app.selectors.effects import effect_get, effects_visible_to
from reconcile_app.services.effect_escalations import escalation_open_for_effect
from reconcile_app.services.effects import (
    OWNER_RETRY_AFTER_SECONDS,
    RETRYABLE_REJECTIONS,
    effect_commit,
    effect_compensate,
    effect_request_check,
    effect_resolve_manually,
)
from reconcile_app.services.principals import principal_acting

REJECTION_STATUS = {
    "version_changed": 412,
    "owner_unavailable": 503,
    "not_sent": 503,
    "idempotency_key_reused": 422,
}
KEY = identifier_path("key", "the effect's Idempotency-Key")
OPERATORS = {403: ["people_only", "forbidden"]}
EFFECT_NOT_FOUND = {404: ["effect_not_found"]}


def _answer(effect: Effect, replayed: bool) -> Response:
    body = EffectOutput(effect).data
    headers = {"Idempotent-Replayed": "true"} if replayed else {}
    if effect.status == EffectStatus.REJECTED:
        code = effect.outcome.get("code", "rejected")
        if code in RETRYABLE_REJECTIONS:
            # Nothing reached the owner: the same key may be sent again, after a moment.
            headers["Retry-After"] = str(OWNER_RETRY_AFTER_SECONDS)
        response = problem_response(
            status_code=REJECTION_STATUS.get(code, 409),
            code=code,
            title="Effect not sent" if code == "not_sent" else "Effect rejected by the owner",
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


COMMIT_DESCRIPTION = """Commit an effect against the version a snapshot read.

Send `If-Match` from the snapshot's `actions[action].if_match` and a fresh `Idempotency-Key`,
and keep the key: a retry with the same key and request is answered from the record (200,
`Idempotent-Replayed: true`), never executed twice. 201: the owner accepted it (a readback
follows); 202: the request was sent and no answer proved what became of it (`status:
unknown`: none came back, or one that is no receipt and no proof nothing ran) — never
re-send it with another key: retry with the same key, or wait on `GET /effects/{key}`.
A 503 `owner_unavailable` executed nothing: retry with the same key after `Retry-After`."""


@extend_schema_view(
    get=api_operation(
        operation_id="effects_list",
        summary="List effects",
        tag="effects",
        description="Effects, newest first (an agent's own; all for people in a role); "
        "`?status=unknown` is the triage queue.",
    )
)
class EffectListView(EpochPinnedMixin, generics.ListAPIView):
    serializer_class = EffectOutput
    filter_backends = [DjangoFilterBackend]
    filterset_class = EffectFilterSet
    queryset = Effect.objects.none()

    def get_queryset(self) -> QuerySet[Effect]:
        return effects_visible_to(self.request.user)

    @api_operation(
        operation_id="effect_commit",
        summary="Commit an effect against a snapshot",
        tag="effects",
        description=COMMIT_DESCRIPTION,
        request=EffectInput,
        # A replay answers the recorded outcome: 200 (accepted and after), 202 (still
        # unknown), or the owner's rejection again.
        parameters=[IDEMPOTENCY_KEY, IF_MATCH, idempotent_replayed([200, 202, 409, 412, 422])],
        responses={
            200: EffectOutput,
            201: EffectOutput,
            202: EffectOutput,
            **{
                status_code: EffectProblemOutput
                for status_code in (400, 403, 404, 409, 412, 422, 423, 428, 503)
            },
        },
        problems={
            400: ["idempotency_key_missing", "invalid_identifier", "invalid_if_match"],
            403: [
                "decision_not_allowed",
                "capability_missing",
                "escalation_pending",
                "escalation_rejected",
                "approved_state_moved",
                "effect_not_bound",
                "value_not_permitted",
                "forbidden",
            ],
            404: ["snapshot_not_found"],
            409: [
                "contract_superseded",
                "snapshot_tainted",
                "idempotency_key_in_use",
                "owner_refused",
            ],
            412: ["snapshot_version_mismatch", "snapshot_expired", "version_changed"],
            422: ["idempotency_key_reused", "value_too_large"],
            423: ["source_quarantined"],
            428: ["precondition_required"],
            503: ["owner_unavailable", "not_sent"],
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
    """One effect with its timeline (an agent's own; any for people in a role): poll it
    after a 202 until `status` is final."""

    @api_operation(
        operation_id="effect_get",
        summary="Get an effect and its timeline",
        tag="effects",
        parameters=[KEY],
        responses={200: EffectDetailOutput},
        problems={**EFFECT_NOT_FOUND, 400: ["invalid_identifier"]},
    )
    def get(self, request: Request, key: str) -> Response:
        return effect_detail_response(request, key)


def effect_detail_response(request: Request, key: str) -> Response:
    """`GET /effects/{key}`'s answer; also served at `GET /effects/bulk` for the effect whose
    key is "bulk" (that path's POST starts a bulk job)."""
    return Response(EffectDetailOutput(effect_get(user=request.user, idempotency_key=key)).data)


class EffectReadbackView(APIView):
    """Queue a readback (accepted, postcondition_failed) or a resolution (unknown) now."""

    permission_classes = [IsOperator]

    @api_operation(
        operation_id="effect_readback",
        summary="Read an effect's target back now",
        tag="effects",
        parameters=[KEY],
        request=None,
        responses={202: EffectOutput},
        problems={
            **OPERATORS,
            **EFFECT_NOT_FOUND,
            409: ["nothing_to_check"],
            503: ["broker_unavailable"],
        },
    )
    def post(self, request: Request, key: str) -> Response:
        effect = effect_request_check(
            idempotency_key=key, actor=request.user, request_id=request_id_of(request)
        )
        return Response(EffectOutput(effect).data, status=status.HTTP_202_ACCEPTED)


class EffectResolveView(APIView):
    """An operator's verdict on an unknown (or failed-postcondition) outcome: `succeeded`
    (→ accepted, then read back) or `not_executed`, with the reason."""

    permission_classes = [IsOperator]

    @api_operation(
        operation_id="effect_resolve",
        summary="Resolve an effect's outcome by hand",
        tag="effects",
        parameters=[KEY],
        request=EffectResolveInput,
        responses={200: EffectOutput},
        problems={
            **OPERATORS,
            **EFFECT_NOT_FOUND,
            400: ["invalid_outcome", "reason_required"],
            409: ["not_resolvable", "owner_may_still_execute"],
        },
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

    @api_operation(
        operation_id="effect_escalate",
        summary="Escalate an effect's unresolved outcome to its owner",
        tag="effects",
        parameters=[KEY],
        request=EffectEscalateInput,
        responses={201: EscalationOutput},
        problems={
            **OPERATORS,
            **EFFECT_NOT_FOUND,
            400: ["reason_required"],
            409: ["not_escalatable"],
        },
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


COMPENSATE_DESCRIPTION = """Undo a wrongly applied effect through the same gate (operators).

The compensating `action` writing `resulting_value` is reconciled in the operator's name — its
own snapshot, read fresh, judged by the contract's policy (403 `decision_not_allowed` when the
policy does not permit it) — then committed like any effect, with its own idempotency key and
If-Match, and read back. The answer is the new effect, as `POST /effects` answers (201, 202
when the owner did not answer, or the owner's rejection); its `compensates` and the original's
`compensated_by` name each other. Audited with the reason on both effects."""


class EffectCompensateView(APIView):
    """Operators commit a compensating effect for an accepted one."""

    permission_classes = [IsOperator]

    @api_operation(
        operation_id="effect_compensate",
        summary="Compensate an effect through the gate",
        tag="effects",
        description=COMPENSATE_DESCRIPTION,
        parameters=[KEY],
        request=EffectCompensateInput,
        responses={
            201: EffectOutput,
            202: EffectOutput,
            **{
                status_code: EffectProblemOutput
                for status_code in (400, 403, 404, 409, 412, 422, 423, 503)
            },
        },
        problems={
            400: ["reason_required", "invalid_identifier"],
            403: [
                "people_only",
                "forbidden",
                "decision_not_allowed",
                "purpose_mismatch",
                "escalation_pending",
                "escalation_rejected",
                "approved_state_moved",
                "effect_not_bound",
                "value_not_permitted",
            ],
            404: ["effect_not_found", "unknown_decision_class"],
            409: [
                "not_compensable",
                "already_compensated",
                "contract_superseded",
                "snapshot_tainted",
                "quarantine_changed",
                "lineage_changed",
                "owner_refused",
            ],
            412: ["snapshot_expired", "version_changed"],
            422: ["unknown_action", "value_too_large"],
            423: ["source_quarantined"],
            503: ["owner_unavailable", "not_sent"],
        },
    )
    def post(self, request: Request, key: str) -> Response:
        payload = EffectCompensateInput(data=request.data)
        payload.is_valid(raise_exception=True)
        result = effect_compensate(
            idempotency_key=key,
            principal=principal_acting(request.user, request.auth),
            actor=request.user,
            request_id=request_id_of(request),
            **payload.validated_data,
        )
        return _answer(result.effect, replayed=False)
