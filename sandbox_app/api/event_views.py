"""The sandbox's effects (the owner's side of a commit, and its ledger) and events, served
with the owner contract of docs/api.md (operators only, like every sandbox endpoint)."""

from __future__ import annotations

import time

from django.db import connection
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from reconcile_app.api.openapi import (
    IDEMPOTENCY_KEY,
    IF_MATCH,
    api_operation,
    etag,
    identifier_path,
    query_time,
)
from reconcile_app.api.problems import problem_response
from reconcile_app.canonical import rfc3339
from reconcile_app.errors import ValidationFailed
from reconcile_app.instants import instant_from_text
from reconcile_app.limits import identifier_check
from reconcile_app.services.effects import check_idempotency_key, parse_if_match
from sandbox_app.api.serializers import (
    SandboxEffectInput,
    SandboxEventAppendedOutput,
    SandboxEventInput,
    SandboxEventsOutput,
    SandboxReceiptOutput,
)
from sandbox_app.api.views import SOURCE, TAG, SandboxView, problems, request_actor, served_source
from sandbox_app.services import (
    SandboxTimeout,
    sandbox_effect_apply,
    sandbox_effect_lookup,
    sandbox_event_append,
    sandbox_events_read,
)


class SandboxEffectsView(SandboxView):
    """The owner's side of a commit: applied when `If-Match` is the record's version; a
    repeated key answers the stored receipt; a key reused for another command is 422."""

    @api_operation(
        operation_id="sandbox_effect_apply",
        summary="Apply an effect at the sandbox owner",
        tag=TAG,
        parameters=[SOURCE, IDEMPOTENCY_KEY, IF_MATCH, etag([201])],
        request=SandboxEffectInput,
        responses={201: SandboxReceiptOutput},
        problems=problems(
            {
                400: ["idempotency_key_missing", "invalid_if_match"],
                412: ["version_changed"],
                422: ["idempotency_key_reused", "value_too_large"],
                428: ["precondition_required"],
                503: ["owner_unavailable"],
                504: ["gateway_timeout"],
            }
        ),
    )
    def post(self, request: Request, source: str) -> Response:
        payload = SandboxEffectInput(data=request.data)
        payload.is_valid(raise_exception=True)
        key = check_idempotency_key(request.headers.get("Idempotency-Key"))
        expected = parse_if_match(request.headers.get("If-Match"))
        try:
            receipt = sandbox_effect_apply(
                source=served_source(source),
                idempotency_key=key,
                expected_version=expected,
                **payload.validated_data,
                **request_actor(request),
            )
        except SandboxTimeout as exc:
            # The command committed; the caller never hears so. Hold the answer past any
            # reasonable client timeout, then give up like a gateway would. The held answer
            # lets its database connection go first: a drill of many timeouts must not
            # hold as many PostgreSQL sessions (nor keep one open past a test's end).
            if exc.seconds and not connection.in_atomic_block:
                connection.close()
            time.sleep(exc.seconds)
            return problem_response(
                status_code=504,
                code="gateway_timeout",
                title="Gateway timeout",
                detail="the owner did not answer in time",
            )
        response = Response(receipt, status=status.HTTP_201_CREATED)
        response["ETag"] = f'"{receipt["resulting_version"]}"'
        return response


class SandboxEffectDetailView(SandboxView):
    """The owner's effect ledger: the receipt of a key it executed."""

    @api_operation(
        operation_id="sandbox_effect_get",
        summary="Look an effect up in the sandbox owner's ledger",
        tag=TAG,
        parameters=[SOURCE, identifier_path("key", "the effect's Idempotency-Key")],
        responses={200: SandboxReceiptOutput},
        problems=problems({404: ["effect_not_found"], 503: ["owner_unavailable"]}),
    )
    def get(self, request: Request, source: str, key: str) -> Response:
        return Response(sandbox_effect_lookup(source=served_source(source), idempotency_key=key))


class SandboxEventsView(SandboxView):
    """Events of event-sourced sources: read a subject's (the owner contract), append one
    (demos and drills)."""

    @api_operation(
        operation_id="sandbox_events_list",
        summary="Read a subject's events",
        tag=TAG,
        parameters=[
            SOURCE,
            OpenApiParameter(
                "subject",
                {"type": "string", "minLength": 1, "maxLength": 200},
                required=True,
                description="an identifier; missing: 400 `subject_required`",
            ),
            OpenApiParameter("after", OpenApiTypes.INT, description="events after this seq"),
            query_time("recorded_before", "only events recorded before this RFC 3339 time"),
        ],
        responses={200: SandboxEventsOutput},
        problems=problems(
            {400: ["subject_required", "invalid_parameter"], 503: ["owner_unavailable"]}
        ),
    )
    def get(self, request: Request, source: str) -> Response:
        subject = request.query_params.get("subject")
        if not subject:
            raise ValidationFailed("subject is required", code="subject_required")
        identifier_check(subject, "subject")
        after_raw = request.query_params.get("after")
        recorded_raw = request.query_params.get("recorded_before")
        try:
            after = int(after_raw) if after_raw else None
        except ValueError as exc:
            raise ValidationFailed("after must be an integer", code="invalid_parameter") from exc
        recorded_before = instant_from_text(recorded_raw, "recorded_before")
        delivered = sandbox_events_read(
            source=served_source(source),
            subject=subject,
            after=after,
            recorded_before=recorded_before,
        )
        return Response(
            {
                "observed_at": rfc3339(delivered.observed_at),
                "events": [
                    {
                        "event_id": event.event_id,
                        "seq": event.seq,
                        "type": event.type,
                        "subject": event.subject,
                        "field": event.field,
                        "value": event.value,
                        "valid_from": rfc3339(event.valid_from),
                        "recorded_at": rfc3339(event.recorded_at),
                    }
                    for event in delivered.events
                ],
            }
        )

    @api_operation(
        operation_id="sandbox_event_append",
        summary="Append an event to a sandbox source",
        tag=TAG,
        parameters=[SOURCE],
        request=SandboxEventInput,
        responses={201: SandboxEventAppendedOutput},
        problems=problems({409: ["event_exists"], 422: ["value_too_large"]}),
    )
    def post(self, request: Request, source: str) -> Response:
        payload = SandboxEventInput(data=request.data)
        payload.is_valid(raise_exception=True)
        event = sandbox_event_append(
            source=served_source(source), **payload.validated_data, **request_actor(request)
        )
        return Response(
            {
                "event_id": event.event_id,
                "seq": event.seq,
                "recorded_at": rfc3339(event.recorded_at),
            },
            status=status.HTTP_201_CREATED,
        )
