"""Evidence, memories, escalations, facts, corrections, quarantines and the audit trail over
the API (snapshots and reconcile: snapshot_serializers; effects: effect_serializers).

Input serializers validate shape; output serializers shape what the views return (and are what
the schema documents). Some public field names (`source`, `field`) shadow attributes of DRF's
own classes in the type stubs; the names are the API contract, so those lines tell mypy so.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.fields import empty

from reconcile_app.api.fields import Identifier, Justification, NonEmptyRefs, Text, Value
from reconcile_app.api.problem_serializers import FactAuthorityOutput
from reconcile_app.choices import (
    CorrectionStatus,
    EscalationStatus,
    EvidenceKind,
    MemoryStatus,
    PrincipalKind,
    QuarantineScope,
    QuarantineStatus,
)
from reconcile_app.errors import ValidationFailed
from reconcile_app.limits import MAX_REASON_CHARACTERS
from reconcile_app.models import MemoryRecord
from reconcile_app.roles import is_staff_role
from reconcile_app.selectors.ledger import promotion_escalation_id
from reconcile_app.selectors.memory_taint import corrections_upstream


class EvidenceInput(serializers.Serializer):
    kind = serializers.ChoiceField(choices=EvidenceKind.choices)
    subject = Identifier()
    field = Identifier(required=False, allow_blank=True, default="")
    value = Value(required=False, allow_null=True, default=None)
    source = Identifier()  # type: ignore[assignment]  # API name
    observed_at = serializers.DateTimeField()
    revokes = Text(max_length=100, required=False, allow_null=True, default=None)
    supersedes = Text(max_length=100, required=False, allow_null=True, default=None)
    derived_from = serializers.ListField(
        child=Text(max_length=200), required=False, default=list, max_length=100
    )
    note = Text(max_length=MAX_REASON_CHARACTERS, required=False, allow_blank=True, default="")
    evidence_id = Text(max_length=100, required=False, allow_null=True, default=None)


class EvidenceOutput(serializers.Serializer):
    evidence_id = serializers.CharField()
    seq = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=EvidenceKind.choices)
    subject = serializers.CharField()
    field = serializers.CharField()
    value = serializers.JSONField(allow_null=True)
    source = serializers.CharField()  # type: ignore[assignment]  # API name
    observed_at = serializers.DateTimeField()
    recorded_at = serializers.DateTimeField()
    revokes = serializers.CharField(source="revokes.evidence_id", allow_null=True, default=None)
    supersedes = serializers.CharField(
        source="supersedes.evidence_id", allow_null=True, default=None
    )
    derived_from = serializers.ListField(child=serializers.CharField())
    note = serializers.CharField()
    recorded_by = serializers.CharField(source="recorded_by.name", allow_null=True, default=None)
    prev_hash = serializers.CharField()
    hash = serializers.CharField()


class MemoryInput(serializers.Serializer):
    memory_class = Identifier()
    subject = Identifier()
    purpose = Text(max_length=150)
    field = Identifier(required=False, allow_blank=True, default="")
    fact_key = Identifier(required=False, allow_blank=True, default="")
    value = Value(allow_null=True)
    derived_from = NonEmptyRefs(
        child=Text(max_length=200),
        required=False,
        default=list,
        max_length=100,
        help_text="what it was derived from (evidence, snapshot or memory ids): at least one, "
        "else 400 `derivation_missing`",
    )
    valid_until = serializers.DateField(required=False, allow_null=True, default=None)
    owner = Text(max_length=200, required=False, allow_null=True, default=None)
    source_revision = Text(max_length=200, required=False, allow_blank=True, default="")
    supersedes = Text(max_length=100, required=False, allow_null=True, default=None)
    note = Text(max_length=MAX_REASON_CHARACTERS, required=False, allow_blank=True, default="")
    written_at = serializers.DateTimeField(required=False, allow_null=True, default=None)
    memory_id = Text(max_length=100, required=False, allow_null=True, default=None)


class MemoryOutput(serializers.Serializer):
    memory_id = serializers.CharField()
    agent = serializers.CharField(source="agent.name")
    memory_class = serializers.CharField()
    subject = serializers.CharField()
    purpose = serializers.CharField()
    field = serializers.CharField()
    fact_key = serializers.CharField()
    value = serializers.JSONField(allow_null=True)
    note = serializers.CharField()
    derived_from = serializers.ListField(child=serializers.CharField())
    owner = serializers.CharField(allow_null=True)
    source_revision = serializers.CharField()
    valid_until = serializers.DateField(allow_null=True)
    supersedes = serializers.CharField(source="supersedes.memory_id", allow_null=True, default=None)
    status = serializers.ChoiceField(choices=MemoryStatus.choices)
    # The escalation that asks a reviewer to promote it; null for a memory admitted directly.
    promotion_escalation_id = serializers.SerializerMethodField()
    written_at = serializers.DateTimeField()
    recorded_at = serializers.DateTimeField()

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_promotion_escalation_id(self, record: MemoryRecord) -> str | None:
        return promotion_escalation_id(record)


class GroundCorrectedOutput(serializers.Serializer):
    evidence_id = serializers.CharField(help_text="the entry the memory derives from")
    correction_id = serializers.CharField(help_text="the correction that withdrew it")


class MemoryDetailOutput(MemoryOutput):
    """One memory with what has become of its grounds since it was written."""

    grounds_corrected = serializers.SerializerMethodField(
        help_text="corrections of the evidence the memory derives from (directly or through "
        "the snapshots and memories it was made from), oldest first: its grounds were "
        "withdrawn since. Empty when none was. Its status does not change: claims are "
        "checked against the owners' state whatever a memory rests on."
    )

    @extend_schema_field(GroundCorrectedOutput(many=True))
    def get_grounds_corrected(self, record: MemoryRecord) -> list[dict[str, str]]:
        return [
            {"evidence_id": found.evidence_id, "correction_id": found.correction_id}
            for found in corrections_upstream(record)
        ]


class ResolveContradictionInput(serializers.Serializer):
    note = Justification()


class EscalationOutput(serializers.Serializer):
    escalation_id = serializers.CharField()
    code = serializers.CharField(
        help_text="why it was opened: `authority_ambiguous`, `owner_missing`, `promotion`, "
        "`effect_<status>` (an operator's escalation of an effect) or an escalated "
        "snapshot's first reason code (an open set)"
    )
    fact_key = serializers.CharField(allow_blank=True)
    snapshot_id = serializers.CharField(
        source="snapshot.snapshot_id", allow_null=True, default=None
    )
    effect_key = serializers.CharField(
        source="effect.idempotency_key", allow_null=True, default=None
    )
    # The suggested memory a promotion asks about; null for every other escalation.
    memory_id = serializers.CharField(source="memory.memory_id", allow_null=True, default=None)
    candidate_refs = serializers.ListField(child=serializers.CharField())
    owner = serializers.CharField()
    next_action = serializers.CharField()
    allowed_until_resolved = serializers.ListField(child=serializers.CharField())
    write_allowed = serializers.BooleanField()
    detail = serializers.CharField(allow_blank=True)
    requested_by = serializers.CharField(source="requested_by.name", allow_null=True, default=None)
    status = serializers.ChoiceField(choices=EscalationStatus.choices)
    opened_at = serializers.DateTimeField()
    decided_at = serializers.DateTimeField(allow_null=True)
    decided_by = serializers.CharField(source="decided_by.username", allow_null=True, default=None)
    rationale = serializers.CharField(allow_blank=True)
    selected_ref = serializers.CharField(allow_blank=True)

    def to_representation(self, instance: Any) -> dict[str, Any]:
        shown = super().to_representation(instance)
        request = self.context.get("request")
        asker = instance.requested_by
        if (
            request is not None
            and asker is not None
            and asker.kind == PrincipalKind.AGENT
            and not is_staff_role(request.user)
            and asker.user_id != request.user.pk
        ):
            # A fact key's escalation reaches every agent that asks about the key; which
            # other agent asked first is that agent's business. A person who raised one (an
            # operator asking the owner about this agent's effect) stays named.
            shown["requested_by"] = None
        return dict(shown)


class EscalationDecisionInput(serializers.Serializer):
    rationale = Justification()
    selected_ref = Text(max_length=100, required=False, allow_null=True, default=None)


class FactOutput(serializers.Serializer):
    code = serializers.ChoiceField(choices=["ok"])
    fact = MemoryOutput()
    authority = FactAuthorityOutput(allow_null=True)
    candidates = serializers.ListField(child=serializers.CharField())
    escalation_id = serializers.CharField(allow_null=True)
    on = serializers.DateField()
    as_of = serializers.DateTimeField(allow_null=True)
    quarantined_classes = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="as_of answers to people"
    )


class CorrectionReviewOutput(serializers.Serializer):
    """What a person should review, by kind (at most `listed_per_kind` of each)."""

    snapshots = serializers.ListField(child=serializers.CharField())
    decisions = serializers.ListField(child=serializers.CharField())
    effects = serializers.ListField(child=serializers.CharField())
    memories = serializers.ListField(child=serializers.CharField())


class CorrectionBlastRadiusOutput(serializers.Serializer):
    counts = serializers.DictField(
        child=serializers.IntegerField(), help_text="descendants by kind (empty while computing)"
    )
    review = CorrectionReviewOutput()
    listed_per_kind = serializers.IntegerField()


class CorrectionOutput(serializers.Serializer):
    """A correction entry and its blast radius (`status: computing` while a large radius is
    still being counted; poll `GET /api/v1/corrections/{id}`)."""

    correction_id = serializers.CharField()
    status = serializers.ChoiceField(choices=CorrectionStatus.choices)
    evidence_id = serializers.CharField(help_text="the corrected entry")
    reason = serializers.CharField()
    actor = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()
    completed_at = serializers.DateTimeField(allow_null=True)
    correction = EvidenceOutput(help_text="the correction's own ledger entry")
    blast_radius = CorrectionBlastRadiusOutput()


class CorrectionListItemOutput(serializers.Serializer):
    """One correction in a list: the entry it corrected (and its subject, field and source),
    who, why, when, and how far it reached (`counts`); its review lists are the one
    correction's answer (`GET /api/v1/corrections/{id}`)."""

    correction_id = serializers.CharField()
    status = serializers.ChoiceField(choices=CorrectionStatus.choices)
    evidence_id = serializers.CharField(
        source="corrected.evidence_id", help_text="the corrected entry"
    )
    subject = serializers.CharField(source="corrected.subject")
    field = serializers.CharField(source="corrected.field")
    source = serializers.CharField(source="corrected.source")  # type: ignore[assignment]  # API name
    reason = serializers.CharField()
    actor = serializers.CharField(source="actor.username", allow_null=True, default=None)
    created_at = serializers.DateTimeField()
    completed_at = serializers.DateTimeField(allow_null=True)
    correction = EvidenceOutput(source="entry", help_text="the correction's own ledger entry")
    counts = serializers.DictField(
        child=serializers.IntegerField(), help_text="descendants by kind (empty while computing)"
    )


class ReplacementInput(serializers.Serializer):
    value = Value(allow_null=True)
    observed_at = serializers.DateTimeField(required=False, allow_null=True, default=None)


class CorrectionInput(serializers.Serializer):
    evidence_id = Text(max_length=100)
    reason = Justification()
    replacement = ReplacementInput(required=False, allow_null=True, default=None)


class QuarantineScopeField(serializers.ChoiceField):
    """One of the three scopes; anything else (null, a number, a list, another word) is the
    operation's declared 400 `invalid_scope`, not DRF's generic `invalid_request`."""

    def run_validation(self, data: Any = empty) -> Any:
        if data is not empty and data not in QuarantineScope.values:
            raise ValidationFailed(
                "scope must be source, memory_class or memory",
                code="invalid_scope",
                errors={"scope": [f"{data!r} is not one of {', '.join(QuarantineScope.values)}"]},
            )
        return super().run_validation(data)


class QuarantineInput(serializers.Serializer):
    scope = QuarantineScopeField(choices=QuarantineScope.choices)
    target = Identifier()
    reason = Justification()
    since = serializers.DateTimeField(required=False, allow_null=True, default=None)
    ends_at = serializers.DateTimeField(required=False, allow_null=True, default=None)


class QuarantineLiftInput(serializers.Serializer):
    reason = Justification()


class QuarantineOutput(serializers.Serializer):
    id = serializers.CharField(source="quarantine_id")
    scope = serializers.ChoiceField(choices=QuarantineScope.choices)
    target = serializers.CharField()
    reason = serializers.CharField()
    status = serializers.ChoiceField(choices=QuarantineStatus.choices)
    since = serializers.DateTimeField()
    ends_at = serializers.DateTimeField(allow_null=True)
    affected = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="counts of what it touches, by scope (docs/api.md, Quarantine); "
        "empty while applying",
    )
    created_by = serializers.CharField(source="created_by.username", allow_null=True, default=None)
    created_at = serializers.DateTimeField()
    applied_at = serializers.DateTimeField(allow_null=True)
    lifted_at = serializers.DateTimeField(allow_null=True)
    lifted_by = serializers.CharField(source="lifted_by.username", allow_null=True, default=None)
    lift_reason = serializers.CharField(allow_blank=True)


class AuditOutput(serializers.Serializer):
    at = serializers.DateTimeField()
    actor = serializers.CharField(source="actor_name")
    action = serializers.CharField()
    object_kind = serializers.CharField()
    object_ref = serializers.CharField()
    reason = serializers.CharField(allow_blank=True)
    request_id = serializers.CharField(allow_blank=True)
    before = serializers.JSONField(allow_null=True)
    after = serializers.JSONField(allow_null=True)
