"""The same inputs give the same snapshot content, whatever order they arrive in.

Replay rebuilds the reads from the stored content, whose `fields` object comes back from the
database in the database's key order (PostgreSQL's jsonb: shorter keys first; SQLite: as
written), and the evidence in whatever order its query returns: neither may change a byte.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from reconcile_app.canonical import content_hash
from reconcile_app.reconciliation import engine
from reconcile_app.reconciliation.types import (
    Binding,
    ContractSpec,
    EvidenceView,
    FieldRead,
    FieldSpec,
    RuleSpec,
)

NOW = datetime(2026, 8, 30, 12, 0, tzinfo=UTC)
SUBJECT = "account-17"
BINDING = Binding("agent", SUBJECT, "collections", "release", "release")
NAMES = st.lists(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=20),
    min_size=1,
    max_size=5,
    unique=True,
)


def _spec(names: list[str], contradictions: str) -> ContractSpec:
    return ContractSpec(
        pk=1,
        decision_class="release",
        version="1",
        purpose="collections",
        policy_version="p1",
        contradictions=contradictions,
        commit_window_seconds=120,
        reducer="",
        content_hash="h",
        fields=tuple(
            FieldSpec(name, f"source-{name}", index == 0, 300, False)
            for index, name in enumerate(names)
        ),
        actions={"release": names[0]},
        rules=(RuleSpec("allow", "true", "", ("release",)),),
    )


def _read(name: str) -> FieldRead:
    return FieldRead(
        field=name,
        source=f"source-{name}",
        consistency="linearizable",
        status="ok",
        value="collect",
        version=7,
        observed_at=NOW - timedelta(seconds=30),
        valid_from=NOW - timedelta(minutes=20),
        recorded_at=NOW - timedelta(minutes=20),
        read_at=NOW,
    )


def _evidence(name: str, value: str, minutes_ago: int) -> EvidenceView:
    moment = NOW - timedelta(minutes=minutes_ago)
    return EvidenceView(
        f"ev-{name}-{value}", "0" * 64, SUBJECT, name, value, "ledger", moment, moment, False
    )


@settings(max_examples=200, deadline=None)
@given(
    names=NAMES,
    contradicted=st.lists(st.booleans(), min_size=5, max_size=5),
    contradictions=st.sampled_from(["escalate", "refuse"]),
    data=st.data(),
)
def test_content_does_not_depend_on_the_order_reads_and_evidence_arrive_in(
    names, contradicted, contradictions, data
):
    spec = _spec(names, contradictions)
    reads = [_read(name) for name in names]
    evidence = [_evidence(name, "collect", 60) for name in names] + [
        _evidence(name, "hold", 1)
        for name, later in zip(names, contradicted, strict=False)
        if later
    ]

    def content(reads: list[FieldRead], evidence: list[EvidenceView]) -> str:
        return content_hash(
            engine.evaluate(
                contract=spec,
                binding=BINDING,
                raw_reads=reads,
                evidence=evidence,
                claims=[],
                quarantined_classes=frozenset(),
                capable_actions=frozenset({"release"}),
                valid_time=NOW,
                recorded_time=NOW,
            ).content
        )

    as_issued = content(reads, evidence)
    assert content(data.draw(st.permutations(reads)), data.draw(st.permutations(evidence))) == (
        as_issued
    )
