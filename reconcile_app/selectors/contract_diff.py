"""What changed between two versions of one decision class, part by part.

A pure comparison of two versions whose parts are already fetched
(contract_versions.with_parts): fields by name, actions by name, policy rules by kind —
paired first by expression (a rule that only moved, or only changed its code, is the same
rule) and then by position — and the scalar settings one by one. Every row keeps both sides
whole, so the page can show them side by side and mark what differs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reconcile_app.choices import ContractStatus
from reconcile_app.errors import NotFound
from reconcile_app.models import Contract, ContractField, PolicyRule
from reconcile_app.obligation import OBLIGATION_VALUES
from reconcile_app.selectors.contract_versions import (
    RULE_KIND_ORDER,
    actions_of,
    contract_class_versions,
    fields_of,
    rules_in_order,
    with_parts,
)

ADDED, REMOVED, CHANGED, SAME = "added", "removed", "changed", "same"


@dataclass(frozen=True)
class PartChange:
    """One field, rule or action: how it reads in each version (None: not in that one)."""

    key: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None

    @property
    def status(self) -> str:
        if self.before is None:
            return ADDED
        if self.after is None:
            return REMOVED
        return CHANGED if self.changed else SAME

    @property
    def changed(self) -> list[str]:
        """The attributes whose value differs (empty unless present in both)."""
        if self.before is None or self.after is None:
            return []
        return [name for name in self.after if self.before.get(name) != self.after.get(name)]


@dataclass(frozen=True)
class SettingChange:
    name: str
    before: Any
    after: Any

    @property
    def status(self) -> str:
        return CHANGED if self.before != self.after else SAME


@dataclass(frozen=True)
class ContractDiff:
    before: Contract
    after: Contract
    fields: list[PartChange]
    rules: list[PartChange]
    actions: list[PartChange]
    settings: list[SettingChange]

    @property
    def differences(self) -> int:
        statuses = [part.status for part in [*self.fields, *self.rules, *self.actions]]
        statuses += [setting.status for setting in self.settings]
        return sum(1 for status in statuses if status != SAME)

    @property
    def identical(self) -> bool:
        return self.differences == 0


def field_side(item: ContractField) -> dict[str, Any]:
    return {
        "required": item.required,
        "source": item.source.name,
        "max_age_seconds": item.max_age_seconds,
        "evidence": "required" if item.evidence_required else "optional",
    }


def rule_side(rule: PolicyRule) -> dict[str, Any]:
    return {
        "kind": rule.kind,
        "position": rule.position + 1,
        "expression": rule.expression,
        "code": rule.code,
        "permits": list(rule.permits),
    }


def _keyed(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> list[PartChange]:
    """Parts matched by name: the later version's order, then what it dropped."""
    names = [*after, *(name for name in before if name not in after)]
    return [PartChange(key=name, before=before.get(name), after=after.get(name)) for name in names]


def _rule_pairs(
    before: list[PolicyRule], after: list[PolicyRule]
) -> list[tuple[PolicyRule | None, PolicyRule | None]]:
    """Pair each rule with its counterpart of the same kind: same expression first, then
    same position; the rest are added or removed."""
    unmatched = list(before)
    pairs: list[tuple[PolicyRule | None, PolicyRule | None]] = []
    pending: list[PolicyRule] = []
    for rule in after:
        twin = next(
            (
                old
                for old in unmatched
                if (old.kind, old.expression) == (rule.kind, rule.expression)
            ),
            None,
        )
        if twin is None:
            pending.append(rule)
            continue
        unmatched.remove(twin)
        pairs.append((twin, rule))
    for rule in pending:
        twin = next(
            (old for old in unmatched if (old.kind, old.position) == (rule.kind, rule.position)),
            None,
        )
        if twin is not None:
            unmatched.remove(twin)
        pairs.append((twin, rule))
    pairs.extend((old, None) for old in unmatched)

    def evaluation_order(pair: tuple[PolicyRule | None, PolicyRule | None]) -> tuple[int, int, int]:
        rule = pair[1] or pair[0]
        assert rule is not None
        return (RULE_KIND_ORDER[rule.kind], rule.position, 0 if pair[1] else 1)

    return sorted(pairs, key=evaluation_order)


def _rules(before: Contract, after: Contract) -> list[PartChange]:
    changes = []
    for old, new in _rule_pairs(rules_in_order(before), rules_in_order(after)):
        shown = new or old
        assert shown is not None
        changes.append(
            PartChange(
                key=f"{shown.kind} {shown.position + 1}",
                before=rule_side(old) if old else None,
                after=rule_side(new) if new else None,
            )
        )
    return changes


def _settings(before: Contract, after: Contract) -> list[SettingChange]:
    def answers(contract: Contract) -> dict[str, str | None]:
        obligation = contract.obligation or {}
        return {question: obligation.get(question) for question in OBLIGATION_VALUES}

    old_answers, new_answers = answers(before), answers(after)
    return [
        SettingChange("purpose", before.purpose, after.purpose),
        SettingChange("policy_version", before.policy_version, after.policy_version),
        SettingChange("contradictions", before.contradictions, after.contradictions),
        SettingChange(
            "commit_window_seconds", before.commit_window_seconds, after.commit_window_seconds
        ),
        SettingChange("reducer", before.reducer or None, after.reducer or None),
        *(
            SettingChange(f"obligation.{question}", old_answers[question], new_answers[question])
            for question in OBLIGATION_VALUES
        ),
        SettingChange("level", before.level, after.level),
    ]


def contract_diff(before: Contract, after: Contract) -> ContractDiff:
    """Compare two versions whose parts are fetched (no query here)."""
    return ContractDiff(
        before=before,
        after=after,
        fields=_keyed(
            {item.name: field_side(item) for item in fields_of(before)},
            {item.name: field_side(item) for item in fields_of(after)},
        ),
        rules=_rules(before, after),
        actions=_keyed(
            {
                item.name: {"field": item.field, "values": item.values}
                for item in actions_of(before)
            },
            {item.name: {"field": item.field, "values": item.values} for item in actions_of(after)},
        ),
        settings=_settings(before, after),
    )


@dataclass(frozen=True)
class ClassDiff:
    """The diff page's subject: the class's versions (for choosing) and the chosen pair."""

    versions: list[Contract]
    diff: ContractDiff


def contract_versions_diff(
    *, decision_class: str, from_version: str | None, to_version: str | None
) -> ClassDiff:
    """Two versions of a class compared: four queries (the class's versions, then the two
    versions' fields, rules and actions), however many versions the class has.

    Left out, `to` is the newest version loaded and `from` the active one (or, when `to` is
    the active one or none is active, the version loaded before `to`).
    """
    versions = contract_class_versions(decision_class=decision_class)
    by_version = {item.version: item for item in versions}
    for asked in (from_version, to_version):
        if asked and asked not in by_version:
            raise NotFound(
                f"no contract version {decision_class}@{asked}", code="contract_not_found"
            )
    after = by_version[to_version] if to_version else versions[0]
    before = by_version[from_version] if from_version else _default_base(versions, after)
    with_parts([before, after] if before.pk != after.pk else [after])
    return ClassDiff(versions=versions, diff=contract_diff(before, after))


def _default_base(versions: list[Contract], after: Contract) -> Contract:
    active = next((item for item in versions if item.status == ContractStatus.ACTIVE), None)
    if active is not None and active.pk != after.pk:
        return active
    index = versions.index(after)
    return versions[index + 1] if index + 1 < len(versions) else after
