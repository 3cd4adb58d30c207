"""The deterministic heart of `reconcile`: support → classify → decide → snapshot content.

Everything here is a pure function of its arguments, so replay can rebuild a snapshot from
what was recorded and compare hashes. Memory claims are classified but never reach policy:
`decide` sees state fields, evidence support and source-vs-source contradictions only.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from reconcile_app.canonical import rfc3339, same_value
from reconcile_app.choices import (
    ContradictionKind,
    ReadStatus,
    Verdict,
)
from reconcile_app.reconciliation.decision import completeness_of, decide
from reconcile_app.reconciliation.support import (
    apply_freshness,
    latest_per_value,
    source_contradictions,
    support_for,
)
from reconcile_app.reconciliation.types import (
    Binding,
    Claim,
    ContractSpec,
    EvidenceView,
    FieldRead,
    Outcome,
)

# 2: a field's or claim's support is the latest unwithdrawn entry stating the value, not
# every entry that ever stated it (a reconcile then reads an index, flat in history).
# 3: each field says how it was read (`mode`), so replay folds again exactly the events the
# reconcile folded, whatever the source's mode is by then.
# 4: an event-sourced field folds only the events valid by its read time (the snapshot's
# valid-time cut-off): an event recorded now but effective later (a revocation scheduled
# for next week) does not describe the present.
# 5: the content says how far along the evidence chain the decision read (`ledger_seq`):
# an entry stamped before the recorded-time cut-off but committed after the read is not
# what the decision knew, and replay leaves it out.
# Replay rebuilds a snapshot with the version it was issued under.
SCHEMA_VERSION = "5"
SCHEMAS_WITHOUT_READ_MODE = frozenset({"1", "2"})
SCHEMAS_FOLDING_LATER_VALID_EVENTS = frozenset({"1", "2", "3"})


def classify(
    claim: Claim,
    binding: Binding,
    reads: dict[str, FieldRead],
    evidence: list[EvidenceView],
    quarantined_classes: frozenset[str],
    quarantined_memories: Mapping[str, str] | None = None,
) -> tuple[str, str, list[str]]:
    """The seed reconciler, extended with scope and quarantine: (verdict, reason, evidence).

    A claim recalled from a quarantined memory record (`quarantined_memories`: memory id →
    quarantine id) is quarantined before anything else is asked of it: the record is not to
    be trusted wherever it is cited, so it must not feed the snapshot even out of scope.
    """
    if claim.memory_id and quarantined_memories and claim.memory_id in quarantined_memories:
        return (
            Verdict.QUARANTINED,
            f"memory {claim.memory_id} is quarantined ({quarantined_memories[claim.memory_id]})",
            [],
        )
    if claim.subject != binding.subject or (claim.purpose and claim.purpose != binding.purpose):
        return Verdict.OUT_OF_SCOPE, "the claim concerns another subject or purpose", []
    if claim.memory_class and claim.memory_class in quarantined_classes:
        return Verdict.QUARANTINED, f"memory class {claim.memory_class} is quarantined", []
    read = reads.get(claim.field)
    if read is None:
        return Verdict.UNVERIFIED, "no authoritative field for this claim in the contract", []
    if read.status == ReadStatus.STALE:
        return (
            Verdict.STALE_STATE,
            "authoritative view exceeded its decision-specific freshness limit",
            [],
        )
    if read.status != ReadStatus.OK:
        return Verdict.UNVERIFIED, f"no current state to compare with ({read.status})", []

    state_support = support_for(binding.subject, claim.field, read.value, evidence)
    support_ids = [item.evidence_id for item in state_support]
    if same_value(claim.value, read.value):
        if not state_support:
            return (
                Verdict.UNVERIFIED,
                "state and memory agree, but no retained evidence supports the state",
                [],
            )
        return (
            Verdict.CONFIRMED,
            "memory agrees with fresh state and retained evidence",
            support_ids,
        )
    if claim.written_at is not None and any(
        item.observed_at > claim.written_at for item in state_support
    ):
        later = [item.evidence_id for item in state_support if item.observed_at > claim.written_at]
        return Verdict.SUPERSEDED, "a later evidenced state replaced the remembered value", later
    return (
        Verdict.CONTRADICTED,
        "fresh state disagrees with memory, without proven temporal replacement",
        [],
    )


def evaluate(
    *,
    contract: ContractSpec,
    binding: Binding,
    raw_reads: list[FieldRead],
    evidence: list[EvidenceView],
    claims: list[Claim],
    quarantined_classes: frozenset[str],
    capable_actions: frozenset[str],
    valid_time: datetime,
    recorded_time: datetime,
    quarantined_memories: Mapping[str, str] | None = None,
    schema_version: str = SCHEMA_VERSION,
    ledger_seq: int | None = None,
) -> Outcome:
    """Build the full snapshot content for one decision.

    Of the quarantined memory records, the content keeps those its claims cite (so replay
    classifies them the same way); a snapshot citing none hashes as it did before memory
    quarantines existed.
    """
    if schema_version != "1":
        evidence = latest_per_value(evidence)
    cited = {claim.memory_id for claim in claims if claim.memory_id}
    memory_quarantines = {
        memory_id: quarantine_id
        for memory_id, quarantine_id in (quarantined_memories or {}).items()
        if memory_id in cited
    }
    # In the contract's field order, not the order the reads came in: the contradictions and
    # their reasons are listed field by field, and replay takes the reads from the stored
    # content, whose keys the database orders its own way (jsonb: shorter keys first).
    given = {read.field: read for read in raw_reads}
    reads = {
        spec.name: apply_freshness(given[spec.name], spec.max_age_seconds, valid_time)
        for spec in contract.fields
        if spec.name in given  # a caller may pass only some (as the reads in always did)
    }
    contradictions = source_contradictions(binding.subject, reads, evidence)
    with_mode = schema_version not in SCHEMAS_WITHOUT_READ_MODE
    decision = decide(contract, binding, reads, evidence, contradictions, capable_actions)

    verdicts: list[dict[str, Any]] = []
    for index, claim in enumerate(claims):
        verdict, reason, supporting = classify(
            claim, binding, reads, evidence, quarantined_classes, memory_quarantines
        )
        verdicts.append(
            {
                "index": index,
                "subject": claim.subject,
                "field": claim.field,
                "value": claim.value,
                "written_at": rfc3339(claim.written_at),
                "memory_class": claim.memory_class,
                "purpose": claim.purpose,
                "derived_from": list(claim.derived_from),
                "note": claim.note,
                # Only when recalled: a claim without a record hashes as it always did.
                **({"memory_id": claim.memory_id} if claim.memory_id else {}),
                "verdict": str(verdict),
                "reason": reason,
                "evidence": supporting,
            }
        )
        if verdict == Verdict.CONTRADICTED:
            read = reads[claim.field]
            contradictions_for_review = {
                "kind": ContradictionKind.MEMORY_VS_STATE.value,
                "subject": claim.subject,
                "field": claim.field,
                "state": {
                    "value": read.value,
                    "source": read.source,
                    "ref": f"{read.source}@{read.version}",
                },
                "other": {
                    "value": claim.value,
                    "source": f"memory:{claim.memory_class or 'unspecified'}",
                    "ref": f"claim#{index}",
                },
                "detail": reason,
            }
            contradictions.append(contradictions_for_review)

    # The manifest lists the entries the decision rests on (field support, claim verdicts,
    # contradictions), not the subject's whole history: it stays small however long-lived
    # the subject, and replay rebuilds exactly the same list.
    used: set[str] = {ref for item in verdicts for ref in item["evidence"]}
    used |= {
        item["other"]["ref"]
        for item in contradictions
        if item["kind"] == ContradictionKind.EVIDENCE_VS_STATE
    }
    used |= {
        entry.evidence_id
        for name, read in reads.items()
        if read.status == ReadStatus.OK
        for entry in support_for(binding.subject, name, read.value, evidence)
    }
    manifest_ids = sorted(used)
    hashes = {item.evidence_id: item.hash for item in evidence}
    field_support = {
        name: [
            item.evidence_id for item in support_for(binding.subject, name, read.value, evidence)
        ]
        if read.status == ReadStatus.OK
        else []
        for name, read in reads.items()
    }
    content = {
        "schema_version": schema_version,
        "binding": {
            "principal": binding.principal,
            "subject": binding.subject,
            "purpose": binding.purpose,
            "decision_class": binding.decision_class,
            "proposed_action": binding.proposed_action,
            # Present only when a value was proposed: the snapshot then authorises that value
            # alone (and snapshots issued before values could be bound keep their hash).
            **({"proposed_value": binding.proposed_value} if binding.value_bound else {}),
            # The authority the principal held for this class when it asked: replay must not
            # depend on capabilities granted or revoked since.
            "capabilities": sorted(capable_actions),
        },
        "contract": {
            "decision_class": contract.decision_class,
            "version": contract.version,
            "content_hash": contract.content_hash,
        },
        "reducer_version": contract.reducer or None,
        "completeness": completeness_of(contract, reads),
        "decision": decision,
        "fields": {
            spec.name: _field_content(
                reads[spec.name],
                spec.required,
                spec.max_age_seconds,
                field_support[spec.name],
                with_mode=with_mode,
            )
            for spec in contract.fields
        },
        "claims": verdicts,
        "contradictions": contradictions,
        "quarantined_memory_classes": sorted(quarantined_classes),
        **({"quarantined_memories": memory_quarantines} if memory_quarantines else {}),
        "evidence_manifest": [
            {"evidence_id": evidence_id, "hash": hashes[evidence_id]}
            for evidence_id in manifest_ids
        ],
        "cutoffs": {"valid_time": rfc3339(valid_time), "recorded_time": rfc3339(recorded_time)},
        # How far along the evidence chain the decision read (content schema 5): replay reads
        # up to it, not by time alone (`selectors.ledger.evidence_as_of`).
        **({"ledger_seq": ledger_seq} if ledger_seq is not None else {}),
    }
    return Outcome(content=content, verdicts=verdicts, contradictions=contradictions)


def _field_content(
    read: FieldRead, required: bool, max_age_seconds: int, support: list[str], *, with_mode: bool
) -> dict[str, Any]:
    presented = read.status in (ReadStatus.OK, ReadStatus.STALE)
    return {
        # Only a value the owner actually returned is shown; an unavailable owner yields null,
        # never a remembered or cached value presented as current.
        "value": read.value if presented else None,
        "version": read.version if presented else None,
        "source": read.source,
        "status": read.status,
        "required": required,
        "observed_at": rfc3339(read.observed_at),
        "valid_from": rfc3339(read.valid_from),
        "recorded_at": rfc3339(read.recorded_at),
        "read_at": rfc3339(read.read_at),
        "max_age_seconds": max_age_seconds,
        "consistency": read.consistency,
        "evidence": support,
        "detail": read.detail,
        "inputs": read.inputs,
        **({"mode": read.mode} if with_mode else {}),
    }
