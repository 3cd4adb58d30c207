"""A class's latest decisions decided again under two versions: what a new version changes.

The release gates show a version safe (it fails closed, claims never authorise, every rule
evaluates), not that it decides as the version in force does: a version turning every allow
into deny passes them all. Before activating, a reviewer sees what it would decide on the
class's latest decisions: each decided again under both versions, by the pure engine, from
what the decision read (its recorded reads and claims, the evidence it cites). Nothing is
asked of an owner; a decision that did not read a field a version reads, from that field's
source, cannot be decided again without asking one, and is counted apart.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from reconcile_app.choices import ReadStatus
from reconcile_app.models import Contract, DecisionSnapshot
from reconcile_app.reconciliation import engine
from reconcile_app.reconciliation.types import (
    ContractSpec,
    EvidenceView,
    FieldRead,
)
from reconcile_app.selectors.contracts import contract_spec
from reconcile_app.selectors.ledger import evidence_as_of, evidence_cited
from reconcile_app.services.release_gates.world import decision_text
from reconcile_app.services.replay import (
    recorded_binding,
    recorded_claims,
    recorded_cutoffs,
    recorded_reads,
)

logger = logging.getLogger(__name__)

# Decisions looked at, newest first, and changed ones shown.
LATEST = 50
SHOWN = 10
# The most the page spends deciding again. A draft's rule can take half a second an
# evaluation (policy_evaluates fails it, but the diff is where a reviewer looks next): 50
# decisions held the page 22 s, and a slightly slower rule past gunicorn's 30 s, which
# killed the worker (500). Decisions not reached in time are counted apart.
BUDGET_SECONDS = 5.0


@dataclass(frozen=True)
class Redecided:
    snapshot_id: str
    subject: str
    proposal: str
    before: str  # "allow (rule codes) permitting [...]"
    after: str


@dataclass(frozen=True)
class OutcomePreview:
    compared: int  # decisions decided again under both versions
    changed: int
    shown: list[Redecided]  # the newest `SHOWN` that changed
    transitions: list[tuple[str, str, int]]  # (result before, result after, decisions)
    # Decisions that did not read a field one version reads, from its source: by field.
    unread: dict[str, int] = field(default_factory=dict)
    failed: int = 0  # decisions the engine could not decide again (logged)
    unfinished: int = 0  # decisions not reached within BUDGET_SECONDS


def outcome_preview(
    before: Contract,
    after: Contract,
    latest: int = LATEST,
    budget_seconds: float = BUDGET_SECONDS,
) -> OutcomePreview:
    """Two queries (the decisions, the evidence they cite), each version's spec once per
    process, and one more for each decision holding a stale read (`_as_read`)."""
    specs = (contract_spec(before), contract_spec(after))
    snapshots = list(
        DecisionSnapshot.objects.filter(decision_class=after.decision_class)
        .order_by("-issued_at", "-id")
        .values_list("snapshot_id", "content")[:latest]
    )
    cited = evidence_cited(
        {item["evidence_id"] for _, content in snapshots for item in content["evidence_manifest"]}
    )
    changed: list[Redecided] = []
    transitions: Counter[tuple[str, str]] = Counter()
    unread: Counter[str] = Counter()
    compared = failed = unfinished = 0
    started = time.monotonic()
    for index, (snapshot_id, content) in enumerate(snapshots):
        if time.monotonic() - started > budget_seconds:
            unfinished = len(snapshots) - index
            break
        reads = {read.field: read for read in recorded_reads(content)}
        missing = sorted({name for spec in specs for name in _unread(spec, reads)})
        if missing:
            unread.update(missing)
            continue
        try:
            reads, evidence = _as_read(content, reads, specs, cited)
            decided = [_decide(spec, content, reads, evidence) for spec in specs]
        except Exception:
            # A page that reviews a version must not fail on one odd decision of the past:
            # it is counted, and logged for whoever looks into it.
            logger.exception("%s could not be decided again", snapshot_id)
            failed += 1
            continue
        compared += 1
        transitions[(decided[0]["result"], decided[1]["result"])] += 1
        if _outcome(decided[0]) != _outcome(decided[1]):
            binding = content["binding"]
            changed.append(
                Redecided(
                    snapshot_id=snapshot_id,
                    subject=binding["subject"],
                    proposal=binding["proposed_action"] or "nothing proposed",
                    before=decision_text(decided[0]),
                    after=decision_text(decided[1]),
                )
            )
    return OutcomePreview(
        compared=compared,
        changed=len(changed),
        shown=changed[:SHOWN],
        transitions=sorted(
            ((was, now, count) for (was, now), count in transitions.items()),
            key=lambda item: (-item[2], item[0], item[1]),
        ),
        unread=dict(sorted(unread.items())),
        failed=failed,
        unfinished=unfinished,
    )


def _outcome(decision: dict[str, Any]) -> tuple[str, list[str]]:
    return decision["result"], sorted(decision["permitted_actions"])


def _unread(spec: ContractSpec, reads: dict[str, FieldRead]) -> list[str]:
    return [
        item.name
        for item in spec.fields
        if item.name not in reads or reads[item.name].source != item.source
    ]


def _as_read(
    content: dict[str, Any],
    reads: dict[str, FieldRead],
    specs: tuple[ContractSpec, ContractSpec],
    cited: dict[str, EvidenceView],
) -> tuple[dict[str, FieldRead], list[EvidenceView]]:
    """The reads as the owners answered them, and the evidence the decision could see.

    A read is stored `stale` only by the freshness limit of the version that decided
    (`support.apply_freshness`), and the engine judges it again under each version's limit:
    stored stale, a version with a longer limit never saw it fresh (a version relaxing a
    limit from 300 s to 3600 s showed "0 of 1 decide differently" for a read 1200 s old that
    it allows). No evidence was cited for a stale read, so that decision's evidence is read
    as replay reads it: recorded by its cut-off, up to its place on the chain.
    """
    cited_evidence = [
        cited[item["evidence_id"]]
        for item in content["evidence_manifest"]
        if item["evidence_id"] in cited
    ]
    if not any(read.status == ReadStatus.STALE for read in reads.values()):
        return reads, cited_evidence
    as_answered = {
        name: replace(read, status=ReadStatus.OK.value, detail="")
        if read.status == ReadStatus.STALE
        else read
        for name, read in reads.items()
    }
    subject = content["binding"]["subject"]
    fields = {item.name for spec in specs for item in spec.fields} | {
        claim["field"] for claim in content["claims"] if claim["subject"] == subject
    }
    evidence = evidence_as_of(
        subject=subject,
        fields=fields,
        recorded_by=recorded_cutoffs(content)[1],
        ledger_seq=content.get("ledger_seq"),
    )
    return as_answered, evidence


def _decide(
    spec: ContractSpec,
    content: dict[str, Any],
    reads: dict[str, FieldRead],
    evidence: list[EvidenceView],
) -> dict[str, Any]:
    names = {item.name for item in spec.fields}
    valid_time, recorded_time = recorded_cutoffs(content)
    outcome = engine.evaluate(
        contract=spec,
        binding=recorded_binding(content),
        raw_reads=[read for name, read in reads.items() if name in names],
        evidence=evidence,
        claims=recorded_claims(content),
        quarantined_classes=frozenset(content.get("quarantined_memory_classes", [])),
        quarantined_memories=content.get("quarantined_memories", {}),
        capable_actions=frozenset(content["binding"].get("capabilities", [])),
        valid_time=valid_time,
        recorded_time=recorded_time,
    )
    return outcome.content["decision"]  # type: ignore[no-any-return]
