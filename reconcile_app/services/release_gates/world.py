"""The synthetic world the engine gates decide in: reads no owner was asked for.

A `World` is one contract version at one instant: every field read fresh from its source,
supported by one retained evidence entry, under a principal that holds every action (so the
decision is the policy's, not a capability's). States vary the field values, which optional
fields are absent, and what is proposed. Decisions come from the pure engine
(`reconciliation.engine.evaluate`), called through its module so that a regression
patched into the engine is what the gates see.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

from reconcile_app.choices import DecisionResult, ReadStatus
from reconcile_app.reconciliation import engine
from reconcile_app.reconciliation.types import (
    NOT_PROPOSED,
    Binding,
    Claim,
    ContractSpec,
    EvidenceView,
    FieldRead,
)
from reconcile_app.services.release_gates.candidates import field_candidates

T = TypeVar("T")

SUBJECT = "release-gate:subject"
PRINCIPAL = "release-gate"
SOURCE = "release-gate"
# When the synthetic state became true and when its evidence was observed: an hour before
# the decision, so a claim written between then and now is later than its support.
STATE_AGE = timedelta(hours=1)
# The decisions the other gates start from, when the policy lets them be found.
BASE_RESULTS = (DecisionResult.ALLOW, DecisionResult.DENY, DecisionResult.ESCALATE)
# Above this many value combinations, states vary one field at a time instead.
MAX_PRODUCT = 32


@dataclass(frozen=True)
class Finding:
    """What one gate found: whether it passed, in plain words, and how many cases."""

    passed: bool
    detail: str
    checks: int
    # The other gates must not run: they would evaluate a rule this one found too slow,
    # for longer than the worker may take (killed, the activation would wait for ever).
    halts: bool = False


@dataclass(frozen=True)
class State:
    """Field values read `ok` (a field not in `values` is absent: its owner unavailable)
    and the binding proposed."""

    values: dict[str, Any]
    binding: Binding

    def describe(self, spec: ContractSpec) -> str:
        fields = ", ".join(
            f"{field.name}={self.values[field.name]!r}"
            if field.name in self.values
            else f"{field.name} absent"
            for field in spec.fields
        )
        return f"{fields}; {proposal(self.binding)}"


def proposal(binding: Binding) -> str:
    if not binding.proposed_action:
        return "no action proposed"
    if binding.value_bound:
        return f"proposing {binding.proposed_action} = {binding.proposed_value!r}"
    return f"proposing {binding.proposed_action}"


def decision_text(decision: dict[str, Any]) -> str:
    codes = ", ".join(reason["code"] for reason in decision["reasons"])
    permitted = decision["permitted_actions"]
    return f"{decision['result']} ({codes})" + (f" permitting {permitted}" if permitted else "")


class World:
    def __init__(self, spec: ContractSpec, now: datetime) -> None:
        self.spec = spec
        self.now = now
        self.candidates = field_candidates(spec)
        self._bases: list[tuple[State, dict[str, Any]]] | None = None
        self._memo: dict[str, Any] = {}

    def memo(self, key: str, compute: Callable[[], T]) -> T:
        """Computed once per gate run: what two gates share (an exception is not kept, so
        the second gate meets it too)."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]  # type: ignore[no-any-return]

    def at(self, now: datetime) -> World:
        """The same world at another instant (candidates and base states carry over: they
        do not depend on the time)."""
        moved = copy.copy(self)
        moved.now = now
        return moved

    # --- bindings ------------------------------------------------------------------------

    def binding(self, action: str = "", value: Any = NOT_PROPOSED) -> Binding:
        return Binding(
            principal=PRINCIPAL,
            subject=SUBJECT,
            purpose=self.spec.purpose,
            decision_class=self.spec.decision_class,
            proposed_action=action,
            proposed_value=value,
        )

    def action_values(self, action: str) -> list[Any]:
        declared = self.spec.action_values.get(action)
        return list(declared) if declared else list(self.candidates[self.spec.actions[action]])

    def bindings(self) -> list[Binding]:
        """Nothing proposed, each action, and each action with each value it could write."""
        found = [self.binding()]
        for action in sorted(self.spec.actions):
            found.append(self.binding(action))
            found.extend(self.binding(action, value) for value in self.action_values(action))
        return found

    # --- reads and evidence --------------------------------------------------------------

    def ok_read(self, field: str, value: Any, *, observed_at: datetime | None = None) -> FieldRead:
        spec = self.spec.field(field)
        assert spec is not None
        return FieldRead(
            field=field,
            source=spec.source,
            consistency="linearizable",
            status=ReadStatus.OK.value,
            value=value,
            version=1,
            observed_at=observed_at or self.now - timedelta(seconds=1),
            valid_from=self.now - STATE_AGE,
            recorded_at=self.now - STATE_AGE,
            read_at=self.now,
        )

    def failed_read(self, field: str, status: str) -> FieldRead:
        spec = self.spec.field(field)
        assert spec is not None
        return FieldRead(
            field=field,
            source=spec.source,
            consistency="linearizable",
            status=status,
            value=None,
            version=None,
            observed_at=None,
            valid_from=None,
            recorded_at=None,
            read_at=self.now,
            detail=f"release gate: {status}",
        )

    def reads(self, state: State) -> list[FieldRead]:
        return [
            self.ok_read(field.name, state.values[field.name])
            if field.name in state.values
            else self.failed_read(field.name, ReadStatus.UNAVAILABLE.value)
            for field in self.spec.fields
        ]

    def evidence(
        self, field: str, value: Any, *, observed_at: datetime | None = None, tag: str = "support"
    ) -> EvidenceView:
        observed = observed_at or self.now - STATE_AGE
        return EvidenceView(
            evidence_id=f"ev-release-gate-{tag}-{field}",
            hash="0" * 64,
            subject=SUBJECT,
            field=field,
            value=value,
            source=SOURCE,
            observed_at=observed,
            recorded_at=observed,
            withdrawn=False,
        )

    def support(self, state: State) -> list[EvidenceView]:
        """One entry per field read, saying the value read, observed when it became true."""
        return [self.evidence(name, value) for name, value in state.values.items()]

    def claim(self, field: str, value: Any, **extra: Any) -> Claim:
        """A remembered belief, written after the state's support (unless `written_at`)."""
        values: dict[str, Any] = {
            "subject": SUBJECT,
            "field": field,
            "value": value,
            "written_at": self.now - STATE_AGE / 2,
            "memory_class": "release-gate",
            "purpose": self.spec.purpose,
        }
        values.update(extra)
        return Claim(**values)

    # --- deciding ------------------------------------------------------------------------

    def evaluate(
        self,
        state: State,
        *,
        reads: list[FieldRead] | None = None,
        evidence: list[EvidenceView] | None = None,
        claims: list[Claim] | None = None,
        quarantined_classes: frozenset[str] = frozenset(),
        quarantined_memories: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """The snapshot content the engine builds for this state (support unless given)."""
        return engine.evaluate(
            contract=self.spec,
            binding=state.binding,
            raw_reads=self.reads(state) if reads is None else reads,
            evidence=self.support(state) if evidence is None else evidence,
            claims=claims or [],
            quarantined_classes=quarantined_classes,
            quarantined_memories=quarantined_memories,
            # Every action of the contract: what a decision permits is the policy's alone.
            capable_actions=frozenset(self.spec.actions),
            valid_time=self.now,
            recorded_time=self.now,
        ).content

    def assignments(self) -> list[dict[str, Any]]:
        """Field values to try: every combination when few, else each field's values in
        turn from the all-first and the all-last combination."""
        names = [field.name for field in self.spec.fields]
        pools = [self.candidates[name] for name in names]
        total = 1
        for pool in pools:
            total *= len(pool)
        if total <= MAX_PRODUCT:
            return [dict(zip(names, values, strict=True)) for values in itertools.product(*pools)]
        found: list[dict[str, Any]] = []
        for start in (
            {n: p[0] for n, p in zip(names, pools, strict=True)},
            {n: p[-1] for n, p in zip(names, pools, strict=True)},
        ):
            found.append(start)
            for name, pool in zip(names, pools, strict=True):
                found.extend({**start, name: value} for value in pool if value != start[name])
        return found

    def base_states(self) -> list[tuple[State, dict[str, Any]]]:
        """States the policy allows, denies and escalates (the first found of each, every
        field present), and their decisions; the first state tried if none of those."""
        if self._bases is None:
            found = self._first_of_each_result()
            bases = [found[result] for result in BASE_RESULTS if result in found]
            self._bases = bases or [next(iter(found.values()))]
        return self._bases

    def _first_of_each_result(self) -> dict[str, tuple[State, dict[str, Any]]]:
        """Proposals outermost, so a state is found with as little proposed as possible."""
        found: dict[str, tuple[State, dict[str, Any]]] = {}
        assignments = self.assignments()
        for binding in self.bindings():
            for values in assignments:
                state = State(values=values, binding=binding)
                decision = self.evaluate(state)["decision"]
                found.setdefault(decision["result"], (state, decision))
                if all(result in found for result in BASE_RESULTS):
                    return found
        return found

    def allowed_state(self) -> State:
        """The state the policy allows if there is one, else the first base state."""
        for state, decision in self.base_states():
            if decision["result"] == DecisionResult.ALLOW:
                return state
        return self.base_states()[0][0]
