"""History-substitution invariance (seed 002): two histories that reduce to the same state
must yield the same permitted action set; duplicated and reordered delivery within the
ordering guarantee must yield the same state.

Runs end to end: histories are written to the sandbox's event log, every subject is
reconciled through the real protocol, and the decisions are compared. That makes it a tool
(`manage.py invariance` runs it in a scratch database), not part of the reducers it checks.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from io import TextIOBase

from django.utils import timezone

from reconcile_app.models import Principal
from reconcile_app.reducers import Event, fold, reducer_named
from reconcile_app.reducers.hardship import HARDSHIP_V3
from reconcile_app.services.reconcile import ReconcileRequest, snapshot_issue
from sandbox_app.services import sandbox_event_append, sandbox_fault_add, sandbox_record_write

DECISION_CLASS = "collections-letter"
SOURCE = "hardship-ledger"
# The letter's own field, read live from its owner: unwritten, every decision would refuse
# (a required field unavailable), and every pair would agree without testing anything.
LETTER_SOURCE = "correspondence-service"
KINDS = ("HardshipApproved", "HardshipRevoked", "PaymentMissed", "ArrearsCleared")


@dataclass
class InvarianceReport:
    pairs: int = 0
    state_mismatches: int = 0
    action_violations: int = 0
    delivery_violations: int = 0
    examples: list[str] = field(default_factory=list)
    # How often each result was decided: a run where all are `refuse` compared nothing.
    results: Counter[str] = field(default_factory=Counter)

    @property
    def ok(self) -> bool:
        return not (self.state_mismatches or self.action_violations or self.delivery_violations)


def minimal_history(state: dict[str, object]) -> list[str]:
    """The shortest clean history reaching the same reduced state."""
    kinds = ["PaymentMissed"] * int(state["missed_payments"])  # type: ignore[call-overload]
    if state["hardship_active"]:
        kinds.append("HardshipApproved")
    return kinds


def _write(subject: str, kinds: list[str]) -> None:
    sandbox_record_write(source=LETTER_SOURCE, subject=subject, field="letter_status", value="none")
    for seq, kind in enumerate(kinds, start=1):
        sandbox_event_append(
            source=SOURCE, event_id=f"{subject}-{seq}", type=kind, subject=subject, seq=seq
        )


def _decide(principal: Principal, subject: str) -> tuple[str, tuple[str, ...], dict[str, object]]:
    snapshot = snapshot_issue(
        principal=principal,
        request=ReconcileRequest(
            subject=subject,
            purpose="collections",
            decision_class=DECISION_CLASS,
            proposed_action="send_collections_letter",
        ),
    )
    decision = snapshot.content["decision"]
    values = {name: read["value"] for name, read in snapshot.content["fields"].items()}
    return decision["result"], tuple(decision["permitted_actions"]), values


def run_invariance(
    *, principal: Principal, pairs: int, seed: int, run_id: str, out: TextIOBase | None = None
) -> InvarianceReport:
    rng = random.Random(seed)  # noqa: S311 - reproducible histories, not secrets
    reducer = reducer_named("hardship@3") or HARDSHIP_V3
    report = InvarianceReport()
    # The seed's own pair first: approved then revoked, against no history at all.
    cases = [["HardshipApproved", "HardshipRevoked"]]
    cases += [[rng.choice(KINDS) for _ in range(rng.randint(0, 12))] for _ in range(pairs - 1)]
    for index, history in enumerate(cases):
        report.pairs += 1
        now = timezone.now()
        state = fold(
            reducer,
            [Event(str(i), i, kind, "x", "", None, now, now) for i, kind in enumerate(history, 1)],
        ).values
        clean = minimal_history(state)
        long_subject, short_subject = f"{run_id}-a{index}", f"{run_id}-b{index}"
        _write(long_subject, history)
        _write(short_subject, clean)
        long_result = _decide(principal, long_subject)
        short_result = _decide(principal, short_subject)
        report.results[long_result[0]] += 1
        if long_result[2] != short_result[2]:
            report.state_mismatches += 1
            report.examples.append(f"state differs: {history} vs {clean}")
        if long_result[:2] != short_result[:2]:
            report.action_violations += 1
            report.examples.append(
                f"actions differ: {history} → {long_result[:2]}, {clean} → {short_result[:2]}"
            )
        # The same long history delivered twice over and out of order.
        sandbox_fault_add(source=SOURCE, kind="duplicate_delivery", count=1)
        sandbox_fault_add(source=SOURCE, kind="reorder", count=1)
        if _decide(principal, long_subject) != long_result:
            report.delivery_violations += 1
            report.examples.append(f"delivery changed the decision for {history}")
    if out is not None:
        out.write(f"paired histories: {report.pairs}\n")
        decided = ", ".join(f"{result} {count}" for result, count in sorted(report.results.items()))
        out.write(f"decisions: {decided}\n")
        out.write(f"reduced-state mismatches: {report.state_mismatches}\n")
        out.write(f"permitted-action violations: {report.action_violations} (must be 0)\n")
        out.write(f"duplicate/reorder violations: {report.delivery_violations} (must be 0)\n")
        for example in report.examples[:5]:
            out.write(f"  {example}\n")
    return report
