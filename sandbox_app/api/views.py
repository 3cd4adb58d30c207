"""The sandbox owner system, served over HTTP with the owner contract of docs/api.md.

Operators only, every method: the sandbox is an owner system, and writing to it is writing
the truth the next reconcile reads. Agents never need it (the sandbox adapter works
in-process), and every change made here is audited.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from reconcile_app.api.permissions import IsOperator
from reconcile_app.api.problems import problem_response
from reconcile_app.canonical import rfc3339
from reconcile_app.errors import DomainError, NotFound, ValidationFailed
from reconcile_app.instants import instant_from_text
from reconcile_app.limits import identifier_check
from reconcile_app.request_id import request_id_of
from reconcile_app.services.effects import check_idempotency_key, parse_if_match
from sandbox_app.api.serializers import (
    SandboxAuthorityInput,
    SandboxAuthorityOutput,
    SandboxEffectInput,
    SandboxEventInput,
    SandboxFaultInput,
    SandboxRecordOutput,
    SandboxWriteInput,
)
from sandbox_app.selectors import sandbox_source_exists
from sandbox_app.services import (
    SandboxTimeout,
    sandbox_authority_read,
    sandbox_authority_write,
    sandbox_effect_apply,
    sandbox_effect_lookup,
    sandbox_event_append,
    sandbox_events_read,
    sandbox_fault_add,
    sandbox_faults_clear,
    sandbox_record_read,
    sandbox_record_write,
)

PROBLEM = OpenApiResponse(description="problem+json with a stable `code`")


def _sandbox_source(name: str) -> str:
    if not sandbox_source_exists(name):
        raise NotFound(f"no sandbox source {name!r}", code="unknown_source")
    return name


class SandboxView(APIView):
    permission_classes = [IsOperator]

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        # Path parts name one thing each in the owner's records (docs/api.md "Input limits").
        for name in ("subject", "field", "fact_key", "key"):
            if name in kwargs:
                identifier_check(kwargs[name], name)


def _who(request: Request) -> dict[str, Any]:
    return {"actor": request.user, "request_id": request_id_of(request)}


class SandboxRecordView(SandboxView):
    @extend_schema(responses={200: SandboxRecordOutput, 404: PROBLEM, 503: PROBLEM})
    def get(self, request: Request, source: str, subject: str, field: str) -> Response:
        read = sandbox_record_read(source=_sandbox_source(source), subject=subject, field=field)
        response = Response(
            {
                "value": read.value,
                "version": read.version,
                "valid_from": rfc3339(read.valid_from),
                "recorded_at": rfc3339(read.recorded_at),
                "observed_at": rfc3339(read.observed_at),
            }
        )
        response["ETag"] = f'"{read.version}"'
        return response

    @extend_schema(
        request=SandboxWriteInput, responses={200: SandboxRecordOutput, 400: PROBLEM, 403: PROBLEM}
    )
    def put(self, request: Request, source: str, subject: str, field: str) -> Response:
        payload = SandboxWriteInput(data=request.data)
        payload.is_valid(raise_exception=True)
        record = sandbox_record_write(
            source=_sandbox_source(source),
            subject=subject,
            field=field,
            **payload.validated_data,
            **_who(request),
        )
        response = Response(
            {
                "value": record.value,
                "version": record.version,
                "valid_from": rfc3339(record.valid_from),
                "recorded_at": rfc3339(record.recorded_at),
                "observed_at": rfc3339(record.recorded_at),
            }
        )
        response["ETag"] = f'"{record.version}"'
        return response


class SandboxFaultsView(SandboxView):
    @extend_schema(request=SandboxFaultInput, responses={201: None, 400: PROBLEM, 403: PROBLEM})
    def post(self, request: Request, source: str) -> Response:
        payload = SandboxFaultInput(data=request.data)
        payload.is_valid(raise_exception=True)
        fault = sandbox_fault_add(
            source=_sandbox_source(source), **payload.validated_data, **_who(request)
        )
        return Response(
            {
                "id": fault.pk,
                "kind": fault.kind,
                "count": fault.remaining,
                "seconds": fault.seconds,
            },
            status=status.HTTP_201_CREATED,
        )

    @extend_schema(responses={200: None, 403: PROBLEM})
    def delete(self, request: Request, source: str) -> Response:
        cleared = sandbox_faults_clear(source=_sandbox_source(source), **_who(request))
        return Response({"cleared": cleared})


class SandboxAuthorityView(SandboxView):
    @extend_schema(
        parameters=[
            OpenApiParameter(
                "as_of",
                str,
                description="RFC 3339: the authority as this owner recorded it at that time",
            )
        ],
        responses={
            200: SandboxAuthorityOutput,
            400: PROBLEM,
            404: PROBLEM,
            422: PROBLEM,
            503: PROBLEM,
        },
    )
    def get(self, request: Request, source: str, fact_key: str) -> Response:
        raw_as_of = request.query_params.get("as_of")
        as_of: datetime | None = None
        try:
            as_of = instant_from_text(raw_as_of, "as_of")
            found = sandbox_authority_read(
                source=_sandbox_source(source), fact_key=fact_key, as_of=as_of
            )
        except DomainError as exc:
            if raw_as_of is not None:
                # The question is echoed: a caller tells "none then" from "no history kept".
                exc.extra.setdefault("as_of", rfc3339(as_of) if as_of else raw_as_of)
            raise
        if as_of is None:
            return Response({"owner": found.owner, "source_revision": found.source_revision})
        return Response(
            {
                "owner": found.owner,
                "source_revision": found.source_revision,
                "as_of": rfc3339(as_of),
                "since": rfc3339(found.since),
            }
        )

    @extend_schema(request=SandboxAuthorityInput, responses={200: SandboxAuthorityInput})
    def put(self, request: Request, source: str, fact_key: str) -> Response:
        payload = SandboxAuthorityInput(data=request.data)
        payload.is_valid(raise_exception=True)
        found = sandbox_authority_write(
            source=_sandbox_source(source),
            fact_key=fact_key,
            **payload.validated_data,
            **_who(request),
        )
        return Response({"owner": found.owner, "source_revision": found.source_revision})


class SandboxEffectsView(SandboxView):
    """POST effects: the owner's side of the commit (Idempotency-Key, If-Match)."""

    @extend_schema(
        request=SandboxEffectInput,
        responses={201: None, 400: PROBLEM, 412: PROBLEM, 422: PROBLEM, 428: PROBLEM, 503: PROBLEM},
    )
    def post(self, request: Request, source: str) -> Response:
        payload = SandboxEffectInput(data=request.data)
        payload.is_valid(raise_exception=True)
        key = check_idempotency_key(request.headers.get("Idempotency-Key"))
        expected = parse_if_match(request.headers.get("If-Match"))
        try:
            receipt = sandbox_effect_apply(
                source=_sandbox_source(source),
                idempotency_key=key,
                expected_version=expected,
                **payload.validated_data,
                **_who(request),
            )
        except SandboxTimeout as exc:
            # The command committed; the caller never hears so. Hold the answer past any
            # reasonable client timeout, then give up like a gateway would.
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
    @extend_schema(responses={200: None, 404: PROBLEM, 503: PROBLEM})
    def get(self, request: Request, source: str, key: str) -> Response:
        return Response(sandbox_effect_lookup(source=_sandbox_source(source), idempotency_key=key))


class SandboxEventsView(SandboxView):
    """GET events (owner contract, any caller); POST events (operators: demos and drills)."""

    @extend_schema(
        parameters=[
            OpenApiParameter("subject", str, required=True),
            OpenApiParameter("after", int),
            OpenApiParameter("recorded_before", str),
        ],
        responses={200: None, 400: PROBLEM, 404: PROBLEM, 503: PROBLEM},
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
            source=_sandbox_source(source),
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

    @extend_schema(request=SandboxEventInput, responses={201: None, 400: PROBLEM, 409: PROBLEM})
    def post(self, request: Request, source: str) -> Response:
        payload = SandboxEventInput(data=request.data)
        payload.is_valid(raise_exception=True)
        event = sandbox_event_append(
            source=_sandbox_source(source), **payload.validated_data, **_who(request)
        )
        return Response(
            {
                "event_id": event.event_id,
                "seq": event.seq,
                "recorded_at": rfc3339(event.recorded_at),
            },
            status=status.HTTP_201_CREATED,
        )
