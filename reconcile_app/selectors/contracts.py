"""Read contracts as the engine needs them. Loaded versions are immutable, so cache them."""

from __future__ import annotations

from functools import lru_cache

from django.db.models import QuerySet

from reconcile_app.choices import ContractStatus
from reconcile_app.epochs import EpochCache
from reconcile_app.errors import DomainError, NotFound
from reconcile_app.models import Contract
from reconcile_app.reconciliation.types import ContractSpec, FieldSpec, RuleSpec

_RULE_ORDER = {"deny": 0, "escalate": 1, "allow": 2}


_ACTIVE_CONTRACTS: EpochCache[Contract | None] = EpochCache("configuration")


def contract_current(*, decision_class: str, version: str | None = None) -> Contract:
    """The class's active version: the only one a reconcile may be served under.

    Pinning another version (an older one, say, before a policy was tightened) is refused:
    an agent never chooses the rules it is judged by.
    """
    contract = _ACTIVE_CONTRACTS.get(
        decision_class,
        lambda: (
            Contract.objects.filter(decision_class=decision_class, status=ContractStatus.ACTIVE)
            .order_by("-loaded_at", "-id")
            .first()
        ),
    )
    if contract is None:
        raise NotFound(
            f"no contract version is active for decision class {decision_class!r}",
            code="unknown_decision_class",
        )
    if version and version != contract.version:
        raise DomainError(
            f"{decision_class}@{version} is not the active version; {contract.version} is",
            code="contract_version_inactive",
            status=422,
            title="Contract version inactive",
            active_version=contract.version,
        )
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
    actions = list(contract.actions.all())
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
        actions={action.name: action.field for action in actions},
        action_values={
            action.name: tuple(action.values) if action.values is not None else None
            for action in actions
        },
        rules=rules,
    )


def contract_versions() -> QuerySet[Contract]:
    """Every loaded version, by class, newest first (the API's list)."""
    return Contract.objects.order_by("decision_class", "-loaded_at", "-id")


def contract_version(*, decision_class: str, version: str) -> Contract:
    """One loaded version, whatever its status (404 `contract_not_found`)."""
    contract = Contract.objects.filter(decision_class=decision_class, version=version).first()
    if contract is None:
        raise NotFound(f"no contract version {decision_class}@{version}", code="contract_not_found")
    return contract
