"""Read contracts as the engine needs them. Loaded versions are immutable, so cache them."""

from __future__ import annotations

from functools import lru_cache

from reconcile_app.errors import NotFound
from reconcile_app.models import Contract
from reconcile_app.reconciliation.types import ContractSpec, FieldSpec, RuleSpec

_RULE_ORDER = {"deny": 0, "escalate": 1, "allow": 2}


def contract_current(*, decision_class: str, version: str | None = None) -> Contract:
    contracts = Contract.objects.filter(decision_class=decision_class)
    if version:
        contracts = contracts.filter(version=version)
    contract = contracts.order_by("-loaded_at", "-id").first()
    if contract is None:
        detail = f"no contract is loaded for decision class {decision_class!r}"
        if version:
            detail += f" at version {version!r}"
        raise NotFound(detail, code="unknown_decision_class")
    return contract


def contract_spec(contract: Contract) -> ContractSpec:
    """The engine's view of one contract version (a loaded version never changes)."""
    return _contract_spec(contract.pk, contract.content_hash)


@lru_cache(maxsize=256)
def _contract_spec(contract_id: int, content_hash: str) -> ContractSpec:
    # Keyed on the content hash too: a row id alone can be reused after a rollback.
    contract = Contract.objects.get(pk=contract_id, content_hash=content_hash)
    fields = tuple(
        FieldSpec(
            name=item.name,
            source=item.source.name,
            required=item.required,
            max_age_seconds=item.max_age_seconds,
            evidence_required=item.evidence_required,
        )
        for item in contract.fields.select_related("source").order_by("position")
    )
    rules = tuple(
        RuleSpec(
            kind=rule.kind,
            expression=rule.expression,
            code=rule.code,
            permits=tuple(rule.permits),
        )
        for rule in sorted(contract.rules.all(), key=lambda r: (_RULE_ORDER[r.kind], r.position))
    )
    return ContractSpec(
        pk=contract.pk,
        decision_class=contract.decision_class,
        version=contract.version,
        purpose=contract.purpose,
        policy_version=contract.policy_version,
        contradictions=contract.contradictions,
        commit_window_seconds=contract.commit_window_seconds,
        reducer=contract.reducer,
        content_hash=contract.content_hash,
        fields=fields,
        actions={action.name: action.field for action in contract.actions.all()},
        rules=rules,
    )
