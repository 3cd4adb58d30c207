"""The sandbox owner system, served over HTTP with the owner contract of docs/api.md.

Operators only, every method: the sandbox is an owner system, and writing to it is writing
the truth the next reconcile reads. Agents never need it (the sandbox adapter works
in-process), and every change made here is audited.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from drf_spectacular.utils import OpenApiParameter
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from reconcile_app.api.openapi import (
    api_operation,
    etag,
    identifier_path,
    query_time,
)
from reconcile_app.api.permissions import IsOperator
from reconcile_app.canonical import rfc3339
from reconcile_app.errors import DomainError, NotFound
from reconcile_app.instants import instant_from_text
from reconcile_app.limits import identifier_check
from reconcile_app.request_id import request_id_of
from sandbox_app.api.serializers import (
    SandboxAuthorityInput,
    SandboxAuthorityOutput,
    SandboxFaultInput,
    SandboxFaultOutput,
    SandboxFaultsClearedOutput,
    SandboxRecordOutput,
    SandboxWriteInput,
)
from sandbox_app.selectors import sandbox_source_exists
from sandbox_app.services import (
    sandbox_authority_read,
    sandbox_authority_write,
    sandbox_fault_add,
    sandbox_faults_clear,
    sandbox_record_read,
    sandbox_record_write,
)

TAG = "sandbox"
SOURCE = OpenApiParameter(
    "source", {"type": "string", "pattern": "^[-a-zA-Z0-9_]+$"}, OpenApiParameter.PATH
)
RECORD = [SOURCE, identifier_path("subject"), identifier_path("field")]
# Every sandbox operation: operators only, a source the sandbox serves, identifiers in paths.
BASE_PROBLEMS: dict[int, list[str]] = {
    400: ["invalid_identifier"],
    403: ["people_only", "forbidden"],
    404: ["unknown_source"],
}


def problems(extra: dict[int, list[str]]) -> dict[int, list[str]]:
    merged = {status_code: list(codes) for status_code, codes in BASE_PROBLEMS.items()}
    for status_code, codes in extra.items():
        merged.setdefault(status_code, []).extend(codes)
    return merged


def served_source(name: str) -> str:
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


def request_actor(request: Request) -> dict[str, Any]:
    return {"actor": request.user, "request_id": request_id_of(request)}


class SandboxRecordView(SandboxView):
    """A record of the owner system: its value and version (`ETag`)."""

    @api_operation(
        operation_id="sandbox_record_get",
        summary="Read a sandbox record",
        tag=TAG,
        parameters=[*RECORD, etag([200])],
        responses={200: SandboxRecordOutput},
        problems=problems({404: ["record_not_found"], 503: ["owner_unavailable"]}),
    )
    def get(self, request: Request, source: str, subject: str, field: str) -> Response:
        read = sandbox_record_read(source=served_source(source), subject=subject, field=field)
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

    @api_operation(
        operation_id="sandbox_record_put",
        summary="Write a sandbox record (a new version)",
        tag=TAG,
        parameters=[*RECORD, etag([200])],
        request=SandboxWriteInput,
        responses={200: SandboxRecordOutput},
        problems=problems(
            {400: ["version_backwards"], 412: ["version_changed"], 422: ["value_too_large"]}
        ),
    )
    def put(self, request: Request, source: str, subject: str, field: str) -> Response:
        payload = SandboxWriteInput(data=request.data)
        payload.is_valid(raise_exception=True)
        record = sandbox_record_write(
            source=served_source(source),
            subject=subject,
            field=field,
            **payload.validated_data,
            **request_actor(request),
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
    """Faults make the sandbox misbehave as owners do; a `count` clears one after that many
    firings."""

    @api_operation(
        operation_id="sandbox_fault_add",
        summary="Inject a fault into a sandbox source",
        tag=TAG,
        parameters=[SOURCE],
        request=SandboxFaultInput,
        responses={201: SandboxFaultOutput},
        problems=problems({400: ["unknown_fault", "invalid_count", "invalid_seconds"]}),
    )
    def post(self, request: Request, source: str) -> Response:
        payload = SandboxFaultInput(data=request.data)
        payload.is_valid(raise_exception=True)
        fault = sandbox_fault_add(
            source=served_source(source), **payload.validated_data, **request_actor(request)
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

    @api_operation(
        operation_id="sandbox_faults_clear",
        summary="Clear a sandbox source's faults",
        tag=TAG,
        parameters=[SOURCE],
        responses={200: SandboxFaultsClearedOutput},
        problems=problems({}),
    )
    def delete(self, request: Request, source: str) -> Response:
        cleared = sandbox_faults_clear(source=served_source(source), **request_actor(request))
        return Response({"cleared": cleared})


AUTHORITY = [SOURCE, identifier_path("fact_key")]


class SandboxAuthorityView(SandboxView):
    """Who owns a fact key at this owner, and at which revision (now, or `as_of`)."""

    @api_operation(
        operation_id="sandbox_authority_get",
        summary="Read a fact key's authority",
        tag=TAG,
        parameters=[
            *AUTHORITY,
            query_time("as_of", "RFC 3339: the authority as this owner recorded it then"),
        ],
        responses={200: SandboxAuthorityOutput},
        problems=problems(
            {
                400: ["invalid_parameter"],
                404: ["authority_not_found"],
                422: ["as_of_in_future"],
                503: ["owner_unavailable"],
            }
        ),
    )
    def get(self, request: Request, source: str, fact_key: str) -> Response:
        raw_as_of = request.query_params.get("as_of")
        as_of: datetime | None = None
        try:
            as_of = instant_from_text(raw_as_of, "as_of")
            found = sandbox_authority_read(
                source=served_source(source), fact_key=fact_key, as_of=as_of
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

    @api_operation(
        operation_id="sandbox_authority_put",
        summary="Set a fact key's authority",
        tag=TAG,
        parameters=AUTHORITY,
        request=SandboxAuthorityInput,
        responses={200: SandboxAuthorityOutput},
        problems=problems({}),
    )
    def put(self, request: Request, source: str, fact_key: str) -> Response:
        payload = SandboxAuthorityInput(data=request.data)
        payload.is_valid(raise_exception=True)
        found = sandbox_authority_write(
            source=served_source(source),
            fact_key=fact_key,
            **payload.validated_data,
            **request_actor(request),
        )
        return Response({"owner": found.owner, "source_revision": found.source_revision})
