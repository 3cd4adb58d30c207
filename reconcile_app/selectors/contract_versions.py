"""Reads of contract versions, for the console's Contracts pages and the decision record.

Every decision class with its versions; one version with everything it declares and how it
went live (or was refused, or retired); two versions of one class side by side
(selectors/contract_diff.py). Loaded versions never change, so what is read here is the
version as it was loaded; only its status and its activations move.

The costs are pinned in tests: the list is two queries however many classes, versions and
activations there are; one version is six, however long its activation history.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db.models import OuterRef, Prefetch, Q, Subquery, prefetch_related_objects

from reconcile_app.choices import ActivationStatus, ContractStatus
from reconcile_app.errors import NotFound
from reconcile_app.models import (
    Contract,
    ContractAction,
    ContractActivation,
    ContractField,
    PolicyRule,
)
from reconcile_app.obligation import obligation_triggers
from reconcile_app.selectors.contracts import contract_version

# The order the engine evaluates a policy's rules in (docs/api.md): every deny, every
# escalate, then the first allow that matches.
RULE_KIND_ORDER = {"deny": 0, "escalate": 1, "allow": 2}
NEWEST_REQUEST_FIRST = ("-requested_at", "-id")
GATE_STATUSES = ("passed", "failed", "not_required")


def gate_counts(gates: Iterable[dict[str, Any]]) -> dict[str, int]:
    """How many of an activation's gates passed, failed or were not required."""
    counts = dict.fromkeys(GATE_STATUSES, 0)
    for gate in gates:
        status = str(gate.get("status", ""))
        counts[status] = counts.get(status, 0) + 1
    return counts


def loaded_before(contract: Contract, other: Contract) -> bool:
    """Whether `contract` was loaded before `other` (versions are free text: the load order,
    not the spelling, says which came first)."""
    return (contract.loaded_at, contract.pk) < (other.loaded_at, other.pk)


# --- Every class ------------------------------------------------------------------------------


@dataclass(frozen=True)
class VersionRow:
    """One version in the list, with its newest activation (running or finished), if any."""

    contract: Contract
    latest_activation: ContractActivation | None

    @property
    def gate_counts(self) -> dict[str, int]:
        return gate_counts(self.latest_activation.gates if self.latest_activation else [])


@dataclass(frozen=True)
class ContractClassView:
    """A decision class: its versions, the newest loaded first."""

    decision_class: str
    versions: list[VersionRow]

    @property
    def active(self) -> Contract | None:
        return next(
            (row.contract for row in self.versions if row.contract.status == ContractStatus.ACTIVE),
            None,
        )


def contract_classes() -> list[ContractClassView]:
    """Every class by name, each with its versions: two queries, whatever the history."""
    latest_activation = (
        ContractActivation.objects.filter(contract=OuterRef("pk"))
        .order_by(*NEWEST_REQUEST_FIRST)
        .values("pk")[:1]
    )
    contracts = list(
        Contract.objects.annotate(latest_activation_pk=Subquery(latest_activation)).order_by(
            "decision_class", "-loaded_at", "-id"
        )
    )
    activations = ContractActivation.objects.in_bulk(
        [contract.latest_activation_pk for contract in contracts if contract.latest_activation_pk]
    )
    classes: dict[str, list[VersionRow]] = {}
    for contract in contracts:
        classes.setdefault(contract.decision_class, []).append(
            VersionRow(
                contract=contract,
                latest_activation=activations.get(contract.latest_activation_pk),
            )
        )
    return [ContractClassView(decision_class=name, versions=rows) for name, rows in classes.items()]


# --- One version ------------------------------------------------------------------------------


def with_parts(contracts: list[Contract]) -> list[Contract]:
    """The versions with their fields (and each field's source), rules and actions, in three
    queries for any number of versions; parts already fetched are not fetched again."""
    prefetch_related_objects(
        contracts,
        Prefetch(
            "fields",
            queryset=ContractField.objects.select_related("source").order_by("position"),
        ),
        Prefetch("rules", queryset=PolicyRule.objects.order_by("kind", "position")),
        Prefetch("actions", queryset=ContractAction.objects.order_by("name")),
    )
    return contracts


def fields_of(contract: Contract) -> list[ContractField]:
    return list(contract.fields.all())


def rules_in_order(contract: Contract) -> list[PolicyRule]:
    """The policy's rules in the order the engine evaluates them."""
    return sorted(
        contract.rules.all(), key=lambda rule: (RULE_KIND_ORDER[rule.kind], rule.position)
    )


def actions_of(contract: Contract) -> list[ContractAction]:
    return list(contract.actions.all())


@dataclass(frozen=True)
class ContractVersionDetail:
    """One version with its parts, its activations and the class's other versions."""

    contract: Contract  # fields (with sources), rules and actions prefetched
    activations: list[ContractActivation]  # this version's, newest request first
    # The activation of another version that last retired this one (None unless retired).
    retired_by: ContractActivation | None
    class_versions: list[Contract]  # every version of the class, newest loaded first

    @property
    def label(self) -> str:
        return str(self.contract)

    @property
    def fields(self) -> list[ContractField]:
        return fields_of(self.contract)

    @property
    def required_fields(self) -> list[ContractField]:
        return [item for item in self.fields if item.required]

    @property
    def optional_fields(self) -> list[ContractField]:
        return [item for item in self.fields if not item.required]

    @property
    def rules(self) -> list[PolicyRule]:
        return rules_in_order(self.contract)

    @property
    def actions(self) -> list[ContractAction]:
        return actions_of(self.contract)

    @property
    def triggers(self) -> list[str]:
        return obligation_triggers(self.contract.obligation)

    @property
    def latest_activation(self) -> ContractActivation | None:
        return self.activations[0] if self.activations else None

    @property
    def latest_finished(self) -> ContractActivation | None:
        """The version's gate report: its newest activation that finished."""
        return next((item for item in self.activations if item.finished_at is not None), None)

    @property
    def went_live(self) -> ContractActivation | None:
        """The activation that last made this version the active one."""
        return next(
            (item for item in self.activations if item.status == ActivationStatus.ACTIVATED),
            None,
        )

    @property
    def running(self) -> ContractActivation | None:
        latest = self.latest_activation
        return latest if latest is not None and latest.status == ActivationStatus.RUNNING else None

    @property
    def active_version(self) -> Contract | None:
        return next(
            (item for item in self.class_versions if item.status == ContractStatus.ACTIVE), None
        )

    @property
    def is_rollback(self) -> bool:
        """Activating it goes back: it is retired and was loaded before the active version."""
        active = self.active_version
        return (
            self.contract.status == ContractStatus.RETIRED
            and active is not None
            and loaded_before(self.contract, active)
        )

    @property
    def can_be_activated(self) -> bool:
        """Not active and not already being activated (the service checks both again)."""
        return self.contract.status != ContractStatus.ACTIVE and self.running is None


def contract_version_detail(
    *, decision_class: str, version: str, parts: bool = True
) -> ContractVersionDetail:
    """One version, by class and version: six queries, however long its history (three
    without its parts: what a polling status panel needs)."""
    contract = contract_version(decision_class=decision_class, version=version)
    return contract_version_detail_of(contract, parts=parts)


def contract_version_detail_of(contract: Contract, *, parts: bool = True) -> ContractVersionDetail:
    """The detail of a version already in hand: five queries (its parts in three, its
    activations and what retired it in one, the class's versions in one)."""
    if parts:
        with_parts([contract])
    # This version's activations, and the activation of another version that retired it:
    # `replaced_version` names it within the class.
    rows = list(
        ContractActivation.objects.filter(
            Q(contract=contract)
            | Q(
                contract__decision_class=contract.decision_class,
                replaced_version=contract.version,
                status=ActivationStatus.ACTIVATED,
            )
        )
        .select_related("contract")
        .order_by(*NEWEST_REQUEST_FIRST)
    )
    own = [row for row in rows if row.contract_id == contract.pk]
    retired_by = (
        next((row for row in rows if row.contract_id != contract.pk), None)
        if contract.status == ContractStatus.RETIRED
        else None
    )
    class_versions = list(
        Contract.objects.filter(decision_class=contract.decision_class)
        .only("pk", "decision_class", "version", "status", "loaded_at", "activated_at")
        .order_by("-loaded_at", "-id")
    )
    return ContractVersionDetail(
        contract=contract, activations=own, retired_by=retired_by, class_versions=class_versions
    )


def contract_class_versions(*, decision_class: str) -> list[Contract]:
    """Every version of a class, newest loaded first (one query); NotFound for no class."""
    versions = list(
        Contract.objects.filter(decision_class=decision_class).order_by("-loaded_at", "-id")
    )
    if not versions:
        raise NotFound(f"no decision class {decision_class!r}", code="contract_not_found")
    return versions
