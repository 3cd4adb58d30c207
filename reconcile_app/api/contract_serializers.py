"""Contract versions over the API (docs/api.md, "Contract versions"): each version's status,
obligation assessment and level, its release gates, its activations and its decision record."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from reconcile_app.api.fields import Justification
from reconcile_app.choices import ActivationStatus
from reconcile_app.models import Contract, ContractActivation
from reconcile_app.selectors.contract_versions import ContractVersionDetail
from reconcile_app.services.contract_lifecycle import RELEASE_GATE_FAILED
from reconcile_app.services.decision_record import decision_record_markdown


class GateOutput(serializers.Serializer):
    name = serializers.CharField()
    status = serializers.ChoiceField(choices=["passed", "failed", "not_required"])
    detail = serializers.CharField()
    duration_ms = serializers.IntegerField()
    checks = serializers.IntegerField()


class ObligationOutput(serializers.Serializer):
    """Seed 002's reconstruction obligation assessment, as written in the contract file."""

    mutability = serializers.ChoiceField(choices=["low", "high"])
    authority = serializers.ChoiceField(choices=["single", "contested"])
    consequence = serializers.ChoiceField(choices=["low", "high"])
    replay = serializers.ChoiceField(choices=["none", "required"])


@extend_schema_field(ObligationOutput(allow_null=True))
class ObligationField(serializers.JSONField):
    """The assessment as stored (null: not assessed), documented as its four answers."""


class ActivationInput(serializers.Serializer):
    rationale = Justification()


class ActivationOutput(serializers.ModelSerializer):
    """One request to make a version active, and what became of it."""

    decision_class = serializers.CharField(source="contract.decision_class")
    version = serializers.CharField(source="contract.version")
    contract_status = serializers.CharField(source="contract.status")
    gates = GateOutput(many=True)
    code = serializers.SerializerMethodField()
    failed_gates = serializers.SerializerMethodField()

    class Meta:
        model = ContractActivation
        fields = [
            "activation_id",
            "decision_class",
            "version",
            "status",
            "contract_status",
            "level",
            "requested_by_name",
            "rationale",
            "request_id",
            "requested_at",
            "finished_at",
            "replaced_version",
            "code",
            "failed_gates",
            "detail",
            "gates",
        ]

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_code(self, activation: ContractActivation) -> str | None:
        """`release_gate_failed` for a refusal (the 409 of docs/api.md), else null."""
        return RELEASE_GATE_FAILED if activation.status == ActivationStatus.REFUSED else None

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_failed_gates(self, activation: ContractActivation) -> list[str]:
        return [gate["name"] for gate in activation.gates if gate["status"] == "failed"]


class ContractOutput(serializers.ModelSerializer):
    """A version as listed: what it is and where it stands."""

    obligation = ObligationField(allow_null=True)

    class Meta:
        model = Contract
        fields = [
            "decision_class",
            "version",
            "status",
            "purpose",
            "policy_version",
            "obligation",
            "level",
            "loaded_at",
            "activated_at",
        ]


class ContractDetailOutput(ContractOutput):
    """One version in full: the document as loaded, its gates (from the newest finished
    activation), its activations (newest first) and its decision record (Markdown)."""

    document = serializers.DictField(help_text="the contract document as loaded (YAML as JSON)")
    gates = serializers.SerializerMethodField()
    activations = serializers.SerializerMethodField()
    adr = serializers.SerializerMethodField()

    class Meta(ContractOutput.Meta):
        fields = [*ContractOutput.Meta.fields, "document", "gates", "activations", "adr"]

    # The version's detail (selectors/contract_versions), read once by the view, is in the
    # context: its activations give the gates, the activation history and the ADR.

    @extend_schema_field(GateOutput(many=True))
    def get_gates(self, contract: Contract) -> list[dict[str, Any]]:
        finished = self._detail.latest_finished
        return finished.gates if finished is not None else []

    @extend_schema_field(ActivationOutput(many=True))
    def get_activations(self, contract: Contract) -> list[dict[str, Any]]:
        return list(ActivationOutput(self._detail.activations, many=True).data)

    @extend_schema_field(serializers.CharField())
    def get_adr(self, contract: Contract) -> str:
        return decision_record_markdown(self._detail)

    @property
    def _detail(self) -> ContractVersionDetail:
        return self.context["detail"]
