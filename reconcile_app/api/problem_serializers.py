"""Problem bodies as the schema declares them (RFC 9457, `application/problem+json`).

Every error has the five members below; `code` is the stable, machine-readable one, and the
schema lists per operation and status which codes can come (`x-problem-codes`). Extra members
depend on the code; those a client can rely on are declared here, all optional, and any other
member may be present. `code` stays a plain string on purpose: a client generated with strict
enums must not fail to parse an error it has not met yet.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers

from reconcile_app.api.effect_serializers import EffectOutput
from reconcile_app.choices import ReadStatus


@extend_schema_serializer(component_name="Problem")
class ProblemOutput(serializers.Serializer):
    type = serializers.CharField(help_text="a URI naming the problem type (ends with `code`)")
    title = serializers.CharField()
    status = serializers.IntegerField()
    detail = serializers.CharField()
    code = serializers.CharField(help_text="stable and machine-readable: decide on this")
    errors = serializers.JSONField(  # type: ignore[assignment]  # API name
        required=False, help_text="`invalid_request`: the message(s) for each field"
    )


@extend_schema_serializer(component_name="EffectProblem")
class EffectProblemOutput(ProblemOutput):
    """A refused or rejected commit. A rejection by the owner (`version_changed`,
    `owner_unavailable`, ...) carries the effect as recorded; `version_changed` says which
    version was expected and which was found."""

    idempotency_key = serializers.CharField(required=False)
    expected = serializers.IntegerField(required=False, allow_null=True)
    found = serializers.IntegerField(required=False, allow_null=True)
    effect = EffectOutput(required=False)
    escalation_id = serializers.CharField(required=False, allow_null=True)
    permitted_values = serializers.ListField(
        child=serializers.JSONField(), required=False, help_text="`value_not_permitted`"
    )
    decision_class = serializers.CharField(required=False, help_text="`contract_superseded`")
    version = serializers.CharField(
        required=False, help_text="`contract_superseded`: the snapshot's version, no longer active"
    )
    withdrawn = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="`snapshot_tainted`: the evidence it used that was withdrawn",
    )
    withdrawn_by = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="`snapshot_tainted`"
    )
    corrections = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="`snapshot_tainted`"
    )
    ends_at = serializers.DateTimeField(
        required=False,
        allow_null=True,
        help_text="`source_quarantined`: when the quarantine lifts itself (null: when a "
        "person lifts it)",
    )


class FactAuthorityOutput(serializers.Serializer):
    """The owner's authority for a fact key, as the owner answered (docs/api.md, facts)."""

    source = serializers.CharField(allow_null=True)  # type: ignore[assignment]  # API name
    status = serializers.ChoiceField(choices=ReadStatus.choices)
    owner = serializers.CharField(allow_blank=True)
    source_revision = serializers.CharField(allow_blank=True)
    as_of = serializers.DateTimeField(required=False, help_text="`as_of` answers only")
    history_kept = serializers.BooleanField(
        required=False, help_text="`as_of` answers: false when the owner keeps no history"
    )
    registered = serializers.BooleanField(
        required=False,
        help_text="false, present only when the owner answered that it registers no authority "
        "for the key (by `as_of`): 503 `current_authority_unavailable` without Retry-After, as "
        "asking again will not change it",
    )
    detail = serializers.CharField(
        required=False, help_text="the owner's own account, when it gave no usable authority"
    )


@extend_schema_serializer(component_name="FactProblem")
class FactProblemOutput(ProblemOutput):
    """Every answer but 200 for a fact key: the candidates, the escalation opened (if any),
    the authority asked, and the question echoed."""

    fact_key = serializers.CharField(required=False)
    candidates = serializers.ListField(child=serializers.CharField(), required=False)
    escalation_id = serializers.CharField(required=False, allow_null=True)
    authority = FactAuthorityOutput(required=False, allow_null=True)
    on = serializers.CharField(
        required=False, allow_null=True, help_text="the date asked (YYYY-MM-DD), as given"
    )
    as_of = serializers.CharField(required=False, allow_null=True)
    quarantined_classes = serializers.ListField(child=serializers.CharField(), required=False)
