"""Facts by rule and the escalations that ambiguity opens."""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema_view
from rest_framework import generics
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from reconcile_app.api.openapi import api_operation, identifier_path, query_time
from reconcile_app.api.permissions import IsReviewer
from reconcile_app.api.problem_serializers import FactProblemOutput
from reconcile_app.api.problems import problem_response
from reconcile_app.api.serializers import (
    EscalationDecisionInput,
    EscalationOutput,
    FactOutput,
    MemoryOutput,
)
from reconcile_app.canonical import rfc3339
from reconcile_app.choices import ReadStatus
from reconcile_app.errors import DomainError, ValidationFailed
from reconcile_app.filtersets import EscalationFilterSet
from reconcile_app.instants import instant_from_text
from reconcile_app.limits import identifier_check
from reconcile_app.models import Escalation
from reconcile_app.request_id import request_id_of
from reconcile_app.roles import is_staff_role
from reconcile_app.selectors.escalations import escalation_get, escalations_visible_to
from reconcile_app.selectors.fact_history import FactBelieved, fact_believed, fact_day
from reconcile_app.services import facts
from reconcile_app.services.effects import OWNER_RETRY_AFTER_SECONDS
from reconcile_app.services.escalations import escalation_decide
from reconcile_app.services.principals import principal_acting
from reconcile_app.sources import AuthorityResult

FACT_STATUS = {
    facts.NO_CURRENT_RECORD: (404, "No current record"),
    facts.NO_AUTHORITY_SOURCE: (404, "No authority source"),
    facts.AUTHORITY_AMBIGUOUS: (409, "Authority ambiguous"),
    facts.OWNER_MISSING: (422, "Owner missing"),
    facts.AUTHORITY_UNAVAILABLE: (503, "Current authority unavailable"),
    facts.MEMORY_CLASS_QUARANTINED: (423, "Memory class quarantined"),
}
# As for an owner that could not be reached on a commit.
AUTHORITY_RETRY_AFTER_SECONDS = OWNER_RETRY_AFTER_SECONDS
DETAILS = {
    facts.NO_CURRENT_RECORD: "no record is current for the owner's revision on that date",
    facts.AUTHORITY_AMBIGUOUS: "more than one record is current for the owner's revision",
    facts.OWNER_MISSING: "a current record has no owner",
    facts.AUTHORITY_UNAVAILABLE: "the owner's system of record could not be asked",
    facts.NO_AUTHORITY_SOURCE: "no source answers for this fact key (no source's fact_keys "
    "match it): an operator must declare one",
    facts.MEMORY_CLASS_QUARANTINED: "current records of this key are in a quarantined class",
}
UNREGISTERED_DETAIL = "the owner's system of record registers no authority for this key"

# The only spelling of `on` taken: the one answers echo and the console's form sends.
CALENDAR_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


class FactCurrentView(APIView):
    """select_current(fact_key, on): the one eligible record, or a code and its candidates.

    With `as_of`, the same rule over what was recorded by then (selectors/fact_history.py):
    the records known then with their statuses then, and the owner's authority as it recorded
    it then. That is history: it opens no escalation and writes nothing. Every answer echoes
    `on` and `as_of`, so a problem says which question it answers.
    """

    @api_operation(
        operation_id="fact_current",
        summary="Get the current record of a fact key, by the owner's rule",
        tag="facts",
        parameters=[
            identifier_path("fact_key"),
            OpenApiParameter(
                "on",
                OpenApiTypes.DATE,
                description="the date the rule applies on, YYYY-MM-DD (default: today, or "
                "as_of's date in the fact timezone); else 400 `invalid_date`",
            ),
            query_time(
                "as_of",
                "RFC 3339: answer from the records, statuses and authority as recorded then "
                "(not in the future: 422 `as_of_in_future`)",
            ),
        ],
        responses={
            200: FactOutput,
            **{code: FactProblemOutput for code in (400, 404, 409, 422, 423, 503)},
        },
        problems={
            400: ["invalid_identifier", "invalid_date", "invalid_parameter"],
            404: ["no_current_record", "no_authority_source"],
            409: ["authority_ambiguous"],
            422: ["owner_missing", "as_of_in_future"],
            423: ["memory_class_quarantined"],
            503: ["current_authority_unavailable"],
        },
    )
    def get(self, request: Request, fact_key: str) -> Response:
        on, as_of, echo = _question(request, fact_key)
        if as_of is not None:
            return _believed_response(
                fact_believed(
                    fact_key=fact_key,
                    on=on,
                    as_of=as_of,
                    quarantine_applies=not is_staff_role(request.user),
                )
            )
        answer = facts.fact_current(
            fact_key=fact_key,
            on=on,
            requested_by=principal_acting(request.user, request.auth),
            opens_escalation=not is_staff_role(request.user),
        )
        return _fact_response(
            fact_key=fact_key,
            selection=answer.selection,
            authority=_authority(answer.authority, answer.authority_source),
            escalation_id=answer.escalation.escalation_id if answer.escalation else None,
            echo=echo,
        )


def _question(request: Request, fact_key: str) -> tuple[date, datetime | None, dict[str, Any]]:
    """The date the rule applies on, the recorded time asked about (None: now), and both as
    the answer echoes them; a refusal echoes them as they were given."""
    raw_on = request.query_params.get("on")
    raw_as_of = request.query_params.get("as_of")
    echo: dict[str, Any] = {"on": raw_on, "as_of": raw_as_of}
    try:
        identifier_check(fact_key, "fact_key")
        as_of = instant_from_text(raw_as_of, "as_of")
        if as_of is not None:
            echo["as_of"] = rfc3339(as_of)
            if as_of > timezone.now():
                # What was recorded by then is still being written: the answer could change.
                raise ValidationFailed(
                    "as_of is in the future: history can only be asked about the past",
                    code="as_of_in_future",
                    status=422,
                )
        try:
            # Only the form the answer echoes: Python also reads 20261207 and 2026-W49-1.
            if raw_on and not CALENDAR_DATE.fullmatch(raw_on):
                raise ValueError(raw_on)
            on = date.fromisoformat(raw_on) if raw_on else None
        except ValueError as exc:
            raise ValidationFailed("`on` must be a date YYYY-MM-DD", code="invalid_date") from exc
        if on is None:
            try:
                on = fact_day(as_of)
            except OverflowError as exc:  # a time at the edge of the calendar, in the fact zone
                raise ValidationFailed(
                    "as_of has no date in the fact timezone", code="invalid_parameter"
                ) from exc
        echo["on"] = on.isoformat()
    except DomainError as exc:
        # Every answer but 200 carries `candidates` (API.md): a question that cannot be asked
        # considered none and opened nothing.
        for name, value in {**echo, "candidates": [], "escalation_id": None}.items():
            exc.extra.setdefault(name, value)
        raise
    return on, as_of, echo


def _authority(found: AuthorityResult | None, source: str | None) -> dict[str, Any] | None:
    if found is None:
        return None
    shown: dict[str, Any] = {
        "source": source,
        "status": found.status,
        "owner": found.owner,
        "source_revision": found.source_revision,
    }
    if found.as_of is not None:
        shown.update(as_of=rfc3339(found.as_of), history_kept=not found.no_history)
    if found.none_registered:
        shown["registered"] = False  # the owner's answer, where a retry changes nothing
    if found.detail and (found.as_of is not None or found.none_registered):
        shown["detail"] = found.detail
    return shown


def _believed_response(believed: FactBelieved) -> Response:
    return _fact_response(
        fact_key=believed.fact_key,
        selection=believed.selection,
        authority=_authority(believed.authority, believed.authority_source),
        escalation_id=None,
        echo={"on": believed.on.isoformat(), "as_of": rfc3339(believed.as_of)},
        quarantined_classes=believed.quarantined_classes,
    )


def _fact_response(
    *,
    fact_key: str,
    selection: facts.Selection,
    authority: dict[str, Any] | None,
    escalation_id: str | None,
    echo: dict[str, Any],
    **extra: Any,
) -> Response:
    if selection.code == facts.OK:
        return Response(
            {
                "code": facts.OK,
                "fact": MemoryOutput(selection.fact).data,
                "authority": authority,
                "candidates": selection.candidates,
                "escalation_id": None,
                **echo,
                **extra,
            }
        )
    status_code, title = FACT_STATUS[selection.code]
    unregistered = selection.code == facts.AUTHORITY_UNAVAILABLE and _unregistered(authority)
    response = problem_response(
        status_code=status_code,
        code=selection.code,
        title=title,
        detail=UNREGISTERED_DETAIL if unregistered else DETAILS[selection.code],
        fact_key=fact_key,
        candidates=selection.candidates,
        escalation_id=escalation_id,
        authority=authority,
        **echo,
        **extra,
    )
    if selection.code == facts.AUTHORITY_UNAVAILABLE and _owner_unreachable(authority):
        # The owner could not be asked just now: it may answer in a moment.
        response["Retry-After"] = str(AUTHORITY_RETRY_AFTER_SECONDS)
    return response


def _owner_unreachable(authority: dict[str, Any] | None) -> bool:
    """The owner did not answer (rather than answered with no owner, answered that it
    registers none, or keeps no history: a retry changes none of those)."""
    return (
        authority is not None
        and authority["status"] != ReadStatus.OK
        and authority.get("history_kept", True)
        and not _unregistered(authority)
    )


def _unregistered(authority: dict[str, Any] | None) -> bool:
    return authority is not None and authority.get("registered") is False


ESCALATION = identifier_path("escalation_id")


@extend_schema_view(
    get=api_operation(
        operation_id="escalations_list",
        summary="List escalations",
        tag="escalations",
        description="Escalations, newest first: people in a role see all; an agent sees those "
        "bound to its own snapshots, effects or fact writes, those raised by it, and fact "
        "keys' own escalations (named to any agent by `facts/{key}/current`; `requested_by` "
        "null when another agent raised one).",
    )
)
class EscalationListView(generics.ListAPIView):
    serializer_class = EscalationOutput
    filter_backends = [DjangoFilterBackend]
    filterset_class = EscalationFilterSet
    queryset = Escalation.objects.none()  # for the schema; requests use get_queryset

    def get_queryset(self) -> QuerySet[Escalation]:
        return escalations_visible_to(self.request.user)


class EscalationDetailView(APIView):
    """One escalation: an agent waiting on a snapshot's escalation polls its `status`."""

    @api_operation(
        operation_id="escalation_get",
        summary="Get an escalation",
        tag="escalations",
        parameters=[ESCALATION],
        responses={200: EscalationOutput},
        problems={404: ["escalation_not_found"]},
    )
    def get(self, request: Request, escalation_id: str) -> Response:
        escalation = escalation_get(user=request.user, escalation_id=escalation_id)
        return Response(EscalationOutput(escalation, context={"request": request}).data)


DECISION_PROBLEMS = {
    400: ["rationale_required", "selection_required", "invalid_selection"],
    403: ["people_only", "forbidden", "self_approval_forbidden"],
    404: ["escalation_not_found"],
    409: ["already_decided", "supersession_conflict", "memory_tainted"],
    423: ["memory_class_quarantined", "memory_quarantined"],
}


class EscalationDecisionView(APIView):
    """A reviewer's decision on an open escalation (never the writer of what it asks about)."""

    permission_classes = [IsReviewer]
    approve = True

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


class EscalationApproveView(EscalationDecisionView):
    """Approve: a snapshot escalation then authorises exactly its proposed action within
    the commit window counted from now; an ambiguity takes `selected_ref`; a promotion
    makes the memory active."""

    approve = True

    @api_operation(
        operation_id="escalation_approve",
        summary="Approve an escalation",
        tag="escalations",
        parameters=[ESCALATION],
        request=EscalationDecisionInput,
        responses={200: EscalationOutput},
        problems=DECISION_PROBLEMS,
    )
    def post(self, request: Request, escalation_id: str) -> Response:
        return super().post(request, escalation_id)


class EscalationRejectView(EscalationDecisionView):
    """Reject: the snapshot never authorises; a promotion's memory is rejected."""

    approve = False

    @api_operation(
        operation_id="escalation_reject",
        summary="Reject an escalation",
        tag="escalations",
        parameters=[ESCALATION],
        request=EscalationDecisionInput,
        responses={200: EscalationOutput},
        problems=DECISION_PROBLEMS,
    )
    def post(self, request: Request, escalation_id: str) -> Response:
        return super().post(request, escalation_id)
