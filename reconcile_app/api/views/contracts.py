"""Contract versions: read by people in any role; made active by reviewers, through their
release gates (docs/api.md, "Contract versions"). Agents learn their classes' active versions
from `GET /api/v1/me`."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import extend_schema_view
from rest_framework import generics, status
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from reconcile_app.api.contract_serializers import (
    ActivationInput,
    ActivationOutput,
    ContractDetailOutput,
    ContractOutput,
)
from reconcile_app.api.openapi import api_operation, identifier_path
from reconcile_app.api.permissions import PeopleOnly, role_required
from reconcile_app.choices import ActivationStatus, Role
from reconcile_app.errors import DomainError
from reconcile_app.filtersets import ContractFilterSet
from reconcile_app.limits import identifier_check
from reconcile_app.models import Contract
from reconcile_app.request_id import request_id_of
from reconcile_app.selectors.contract_versions import contract_version_detail
from reconcile_app.selectors.contracts import contract_version, contract_versions
from reconcile_app.services.contract_lifecycle import (
    RELEASE_GATE_FAILED,
    contract_activation_request,
)

VERSION_PATH = [
    identifier_path("decision_class"),
    identifier_path("version", "the contract version, e.g. 7.3"),
]


class IsContractReviewer(BasePermission):
    def has_permission(self, request: Any, view: Any) -> bool:
        return role_required(request, Role.REVIEWER, "activating a contract version")


def _version(decision_class: str, version: str) -> Contract:
    identifier_check(decision_class, "decision_class")
    identifier_check(version, "version")
    return contract_version(decision_class=decision_class, version=version)


@extend_schema_view(
    get=api_operation(
        operation_id="contracts_list",
        summary="List contract versions",
        tag="contracts",
        description="Every loaded version with its status and obligation level (people in a "
        "role; agents learn their classes' active versions from `GET /api/v1/me`).",
        problems={403: ["people_only"]},
    )
)
class ContractListView(generics.ListAPIView):
    permission_classes = [PeopleOnly]
    serializer_class = ContractOutput
    filter_backends = [DjangoFilterBackend]
    filterset_class = ContractFilterSet
    queryset = Contract.objects.none()  # for the schema; requests use get_queryset

    def get_queryset(self) -> QuerySet[Contract]:
        return contract_versions()


class ContractDetailView(APIView):
    """One version: the document as loaded, its release gates (from the newest finished
    activation), its activations and its decision record (Markdown)."""

    permission_classes = [PeopleOnly]

    @api_operation(
        operation_id="contract_get",
        summary="Get a contract version",
        tag="contracts",
        parameters=VERSION_PATH,
        responses={200: ContractDetailOutput},
        problems={
            400: ["invalid_identifier"],
            403: ["people_only"],
            404: ["contract_not_found"],
        },
    )
    def get(self, request: Request, decision_class: str, version: str) -> Response:
        identifier_check(decision_class, "decision_class")
        identifier_check(version, "version")
        detail = contract_version_detail(decision_class=decision_class, version=version)
        return Response(ContractDetailOutput(detail.contract, context={"detail": detail}).data)


class ContractActivateView(APIView):
    """202 while the gates run in a worker; when they have already finished by the time the
    answer is sent (an eager worker), the outcome itself: 200 `activated` or 409
    `release_gate_failed` naming the gates."""

    permission_classes = [IsContractReviewer]

    @api_operation(
        operation_id="contract_activate",
        summary="Activate a contract version through its release gates",
        tag="contracts",
        parameters=VERSION_PATH,
        request=ActivationInput,
        responses={200: ActivationOutput, 202: ActivationOutput},
        problems={
            400: ["invalid_identifier", "rationale_required"],
            403: ["people_only", "forbidden"],
            404: ["contract_not_found"],
            409: ["already_active", "activation_in_progress", "release_gate_failed"],
        },
    )
    def post(self, request: Request, decision_class: str, version: str) -> Response:
        contract = _version(decision_class, version)
        payload = ActivationInput(data=request.data)
        payload.is_valid(raise_exception=True)
        activation = contract_activation_request(
            contract=contract,
            actor=request.user,
            rationale=payload.validated_data["rationale"],
            request_id=request_id_of(request),
        )
        activation.refresh_from_db()
        activation.contract.refresh_from_db()
        body = ActivationOutput(activation).data
        if activation.status == ActivationStatus.RUNNING:
            return Response(body, status=status.HTTP_202_ACCEPTED)
        if activation.status == ActivationStatus.REFUSED:
            raise DomainError(
                activation.detail,
                code=RELEASE_GATE_FAILED,
                status=409,
                title="Release gate failed",
                activation_id=activation.activation_id,
                failed_gates=body["failed_gates"],
                gates=body["gates"],
            )
        return Response(body)
