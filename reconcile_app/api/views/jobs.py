"""Bulk triage: start one job over many effects, and follow its progress."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from django.urls import reverse
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from reconcile_app.api.effect_serializers import EffectDetailOutput
from reconcile_app.api.job_serializers import (
    ContradictionBulkInput,
    EffectBulkInput,
    JobCancelInput,
    JobOutput,
)
from reconcile_app.api.openapi import api_operation, identifier_path
from reconcile_app.api.permissions import IsOperator, PeopleOnly
from reconcile_app.api.views.effects import effect_detail_response
from reconcile_app.choices import BulkJobAction, BulkJobKind
from reconcile_app.errors import ValidationFailed
from reconcile_app.models import BulkJob
from reconcile_app.request_id import request_id_of
from reconcile_app.selectors.bulk import job_get
from reconcile_app.services.bulk_jobs import bulk_job_cancel, bulk_job_create

if TYPE_CHECKING:  # the stubs' protocol; rest_framework has no such name at run time
    from rest_framework.permissions import _SupportsHasPermission

BULK_DESCRIPTION = """Re-check (`readback`) or resolve many effects as one job.

Name the effects by `keys` or by `filter` (the effects list's filters: `status`, `source`,
`action`, `subject`, `snapshot_id`, `created_after`, `created_before`; each a text, `status`
also a list of texts; none empty), never both.
The job's rows are fixed now: 202 with its `job_id` and `count`; one Celery task then acts on each
effect through the same service as the single-effect endpoints, each in its own transaction,
skipping any already concluded. Every audit row it writes carries this request's id
(`X-Request-ID`). Follow it at `GET /api/v1/jobs/{job_id}`."""


# The filter's shape is the service's to check (400 `invalid_filter`), as it is for the
# console's "all N matching": one reading of a filter, one set of codes.
SHAPE_CHECKED = ("keys",)
# The path segment the bulk endpoint shares with `effects/{key}`.
BULK_KEY = "bulk"


# What a bulk request is refused for (400), shared by both bulk endpoints: its selection,
# its action (effects only) and its reason.
SELECTION_PROBLEMS = (
    "selection_required",
    "selection_ambiguous",
    "unknown_keys",
    "invalid_keys",
    "invalid_filter",
    "nothing_matched",
    "selection_too_large",
)
ACTION_PROBLEMS = (
    "invalid_action",
    "outcome_required",
    "invalid_outcome",
    "outcome_not_applicable",
)
REASON_PROBLEMS = ("reason_required", "reason_too_long", "invalid_request")
OPERATORS_ONLY = {403: ["people_only", "forbidden"]}


class EffectBulkView(APIView):
    """POST starts a bulk job (operators). GET is `GET /effects/{key}` for the key "bulk":
    any agent may have used that Idempotency-Key, and this path must not hide its effect."""

    def get_permissions(self) -> Sequence[_SupportsHasPermission]:
        if self.request.method == "POST":
            return [IsOperator()]
        # The effect's own read, with the effect detail's permissions and scoping.
        return super().get_permissions()

    # The same read as `GET /effects/{key}` (operation effect_get), listed here too: a path's
    # documented methods are the ones its `Allow` header names.
    @api_operation(
        operation_id="effect_get_keyed_bulk",
        summary="Get the effect whose Idempotency-Key is `bulk`",
        tag="effects",
        description="`GET /api/v1/effects/{key}` for the key `bulk`, which shares this path "
        "with the bulk endpoint: the same answer and the same scoping.",
        responses={200: EffectDetailOutput},
        problems={404: ["effect_not_found"]},
    )
    def get(self, request: Request) -> Response:
        return effect_detail_response(request, BULK_KEY)

    @api_operation(
        operation_id="effects_bulk",
        summary="Re-check or resolve many effects as one job",
        tag="effects",
        description=BULK_DESCRIPTION,
        request=EffectBulkInput,
        responses={202: JobOutput},
        problems={
            400: [*SELECTION_PROBLEMS, *ACTION_PROBLEMS, *REASON_PROBLEMS],
            **OPERATORS_ONLY,
        },
    )
    def post(self, request: Request) -> Response:
        body = _body(request)
        # Shape only (types, lengths); the service owns every rule, with its own codes, so a
        # console form and this endpoint refuse the same things the same way.
        shape = EffectBulkInput(
            data={name: value for name, value in body.items() if name in SHAPE_CHECKED},
            partial=True,
        )
        shape.is_valid(raise_exception=True)
        job = bulk_job_create(
            actor=request.user,
            action=body.get("action", ""),
            outcome=body.get("outcome") or None,
            reason=body.get("reason"),
            keys=body.get("keys"),
            filters=body.get("filter"),
            request_id=request_id_of(request),
        )
        return _job_accepted(job)


CONTRADICTIONS_BULK_DESCRIPTION = """Resolve many open contradictions as one job, each with `note`.

Name them by `ids` or by `filter` (`subject`, `field`, `kind`, `status`, `detected_after`,
`detected_before`: the contradictions list's filters, each one text; only open ones are
taken), never both. 202 with the `job_id`
and `count`; one Celery
task then resolves each through the same service as `POST /contradictions/{id}/resolve`, each
in its own transaction, skipping any resolved meanwhile. Every audit row carries this
request's id. Follow it at `GET /api/v1/jobs/{job_id}`."""


def _job_accepted(job: BulkJob) -> Response:
    response = Response(JobOutput(job).data, status=status.HTTP_202_ACCEPTED)
    response["Location"] = reverse("api-job", args=[job.job_id])
    return response


def _body(request: Request) -> dict[str, Any]:
    if not isinstance(request.data, dict):
        raise ValidationFailed("the body must be a JSON object", code="invalid_request")
    return request.data


class ContradictionBulkView(APIView):
    permission_classes = [IsOperator]

    @api_operation(
        operation_id="contradictions_bulk",
        summary="Resolve many contradictions as one job",
        tag="contradictions",
        description=CONTRADICTIONS_BULK_DESCRIPTION,
        request=ContradictionBulkInput,
        responses={202: JobOutput},
        problems={
            400: [*SELECTION_PROBLEMS, *REASON_PROBLEMS],
            **OPERATORS_ONLY,
        },
    )
    def post(self, request: Request) -> Response:
        body = _body(request)
        # Shape only, as for effects: the service owns every rule and its codes.
        shape = ContradictionBulkInput(
            data={name: value for name, value in body.items() if name == "ids"},
            partial=True,
        )
        shape.is_valid(raise_exception=True)
        job = bulk_job_create(
            kind=BulkJobKind.CONTRADICTIONS,
            actor=request.user,
            action=BulkJobAction.RESOLVE,
            reason=body.get("note"),
            keys=body.get("ids"),
            filters=body.get("filter"),
            request_id=request_id_of(request),
        )
        return _job_accepted(job)


class JobDetailView(APIView):
    """A bulk job's progress (people in a role)."""

    permission_classes = [PeopleOnly]

    @api_operation(
        operation_id="job_get",
        summary="Follow a bulk job",
        tag="jobs",
        parameters=[identifier_path("job_id", "the job's id, as a bulk `POST` gave it")],
        responses={200: JobOutput},
        problems={403: ["people_only"], 404: ["job_not_found"]},
    )
    def get(self, request: Request, job_id: str) -> Response:
        return Response(JobOutput(job_get(job_id=job_id)).data)


class JobCancelView(APIView):
    """Stop a running bulk job (operators): what it has not reached yet is not acted on."""

    permission_classes = [IsOperator]

    @api_operation(
        operation_id="job_cancel",
        summary="Cancel a running bulk job",
        tag="jobs",
        description="Stops a running job: its pending items are skipped, saying who cancelled "
        "it and why, and no run acts on them. The item being acted on at that moment finishes "
        "(a resolution already committed stays, audited as ever) or is undone. 409 "
        "`job_not_running` for a job that is done or cancelled already.",
        parameters=[identifier_path("job_id", "the job's id, as a bulk `POST` gave it")],
        request=JobCancelInput,
        responses={200: JobOutput},
        problems={
            400: list(REASON_PROBLEMS),
            **OPERATORS_ONLY,
            404: ["job_not_found"],
            409: ["job_not_running"],
        },
    )
    def post(self, request: Request, job_id: str) -> Response:
        body = _body(request)
        reason = body.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise ValidationFailed("`reason` must be text", code="invalid_request")
        job = bulk_job_cancel(
            job_id=job_id, actor=request.user, reason=reason, request_id=request_id_of(request)
        )
        return Response(JobOutput(job).data)
