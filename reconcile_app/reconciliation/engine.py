"""The deterministic heart of `reconcile`: support → classify → decide → snapshot content.

Everything here is a pure function of its arguments, so replay can rebuild a snapshot from
what was recorded and compare hashes. Memory claims are classified but never reach policy:
`decide` sees state fields, evidence support and source-vs-source contradictions only.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from reconcile_app import policy
from reconcile_app.canonical import rfc3339, same_value
from reconcile_app.choices import (
    Completeness,
    ContradictionKind,
    ContradictionPolicy,
    DecisionResult,
    ReadStatus,
    Verdict,
)
from reconcile_app.reconciliation.types import (
    Binding,
    Claim,
    ContractSpec,
    EvidenceView,
    FieldRead,
    Outcome,
)

SCHEMA_VERSION = "1"

# The code an engine refusal reports for a required field in each non-ok status.
REFUSAL_CODES = {
    ReadStatus.UNAVAILABLE: "state_unavailable",
    ReadStatus.TIMEOUT: "state_unavailable",
    ReadStatus.STALE: "stale_state",
    ReadStatus.QUARANTINED: "source_quarantined",
    ReadStatus.CONFLICT: "state_conflict",
}


def apply_freshness(read: FieldRead, max_age_seconds: int, now: datetime) -> FieldRead:
    """An ok read whose owner-vouched time is older than the limit becomes `stale`."""
    if read.status != ReadStatus.OK:
        return read
    if read.observed_at is None:
        # An owner that vouches for no time cannot be shown to be fresh: fail closed.
        return FieldRead(
            **{**read.__dict__, "status": ReadStatus.STALE.value, "detail": "no observed_at"}
        )
    age = (now - read.observed_at).total_seconds()
    if age <= max_age_seconds:
        return read
    return FieldRead(
        **{
            **read.__dict__,
            "status": ReadStatus.STALE.value,
            "detail": f"observed {age:.0f}s before the decision; limit {max_age_seconds}s",
        }
    )


def support_for(
    subject: str, field: str, value: Any, evidence: Iterable[EvidenceView]
) -> list[EvidenceView]:
    """Retained, unwithdrawn evidence that says exactly this value, oldest first."""
    return sorted(
        (
            item
            for item in evidence
            if not item.withdrawn
            and item.subject == subject
            and item.field == field
            and same_value(item.value, value)
        ),
        key=lambda item: (item.observed_at, item.evidence_id),
    )


def classify(
    claim: Claim,
    binding: Binding,
    reads: dict[str, FieldRead],
    evidence: list[EvidenceView],
    quarantined_classes: frozenset[str],
) -> tuple[str, str, list[str]]:
    """The seed reconciler, extended with scope and quarantine: (verdict, reason, evidence)."""
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


def source_contradictions(
    subject: str, reads: dict[str, FieldRead], evidence: list[EvidenceView]
) -> list[dict[str, Any]]:
    """Retained evidence observed after the state's valid time that disagrees with it."""
    found: list[dict[str, Any]] = []
    for read in reads.values():
        if read.status != ReadStatus.OK or read.valid_from is None:
            continue
        history = sorted(
            (
                item
                for item in evidence
                if not item.withdrawn and item.subject == subject and item.field == read.field
            ),
            key=lambda item: (item.observed_at, item.evidence_id),
        )
        if not history:
            continue
        latest = history[-1]
        if latest.observed_at > read.valid_from and not same_value(latest.value, read.value):
            found.append(
                {
                    "kind": ContradictionKind.EVIDENCE_VS_STATE.value,
                    "subject": subject,
                    "field": read.field,
                    "state": {
                        "value": read.value,
                        "source": read.source,
                        "ref": f"{read.source}@{read.version}",
                    },
                    "other": {
                        "value": latest.value,
                        "source": latest.source,
                        "ref": latest.evidence_id,
                    },
                    "detail": (
                        f"{latest.source} observed {latest.value!r} at "
                        f"{rfc3339(latest.observed_at)}, after the state's valid time "
                        f"{rfc3339(read.valid_from)}"
                    ),
                }
            )
    return found


def _reason(code: str, detail: str) -> dict[str, str]:
    return {"code": code, "detail": detail}


def decide(
    contract: ContractSpec,
    binding: Binding,
    reads: dict[str, FieldRead],
    evidence: list[EvidenceView],
    contradictions: list[dict[str, Any]],
    capable_actions: frozenset[str],
) -> dict[str, Any]:
    """Engine refusals → deny → escalate → first allow → `no_rule_matched` (API.md order)."""
    refusals: list[dict[str, str]] = []
    for spec in contract.fields:
        read = reads[spec.name]
        if not spec.required:
            continue
        if read.status != ReadStatus.OK:
            refusals.append(
                _reason(
                    REFUSAL_CODES[ReadStatus(read.status)],
                    f"required field {spec.name} from {spec.source} is {read.status}"
                    + (f": {read.detail}" if read.detail else ""),
                )
            )
        elif spec.evidence_required and not support_for(
            binding.subject, spec.name, read.value, evidence
        ):
            refusals.append(
                _reason(
                    "evidence_missing",
                    f"no unrevoked evidence supports {spec.name} = {read.value!r}",
                )
            )
    if contradictions and contract.contradictions == ContradictionPolicy.REFUSE:
        refusals.extend(_reason("contradiction", item["detail"]) for item in contradictions)
    if refusals:
        if any(
            reads[spec.name].status != ReadStatus.OK for spec in contract.fields if spec.required
        ):
            refusals.append(
                _reason("contract_incomplete", "a required field is not available as current")
            )
        return _decision(DecisionResult.REFUSE, [], refusals, contract)

    fields = {name: read.value for name, read in reads.items() if read.status == ReadStatus.OK}
    effect = binding.effect()
    denies = [
        _reason(rule.code or "denied", _match_detail(rule.expression, matched))
        for rule in contract.rules
        if rule.kind == "deny"
        for matched in [policy.evaluate(rule.expression, fields, effect)]
        if matched is not False
    ]
    if denies:
        return _decision(DecisionResult.DENY, [], denies, contract)
    unwritable = _value_not_permitted(contract, binding)
    if unwritable is not None:
        return _decision(DecisionResult.DENY, [], [unwritable], contract)

    escalations = [
        _reason(rule.code or "escalated", _match_detail(rule.expression, matched))
        for rule in contract.rules
        if rule.kind == "escalate"
        for matched in [policy.evaluate(rule.expression, fields, effect)]
        if matched is not False
    ]
    if contradictions and contract.contradictions == ContradictionPolicy.ESCALATE:
        escalations.extend(_reason("contradiction", item["detail"]) for item in contradictions)
    if escalations:
        return _decision(DecisionResult.ESCALATE, [], escalations, contract)

    for position, rule in enumerate(r for r in contract.rules if r.kind == "allow"):
        if policy.evaluate(rule.expression, fields, effect) is True:
            permitted = [
                action
                for action in rule.permits
                if action in contract.actions
                and (action in capable_actions or "*" in capable_actions)
            ]
            if binding.proposed_action and binding.proposed_action not in permitted:
                return _decision(
                    DecisionResult.DENY,
                    [],
                    [
                        _reason(
                            "action_not_permitted",
                            f"allow rule {position + 1} does not permit {binding.proposed_action}",
                        )
                    ],
                    contract,
                )
            return _decision(
                DecisionResult.ALLOW,
                permitted,
                [_reason("allowed", f"allow rule {position + 1} matched: {rule.expression}")],
                contract,
            )
    return _decision(
        DecisionResult.DENY, [], [_reason("no_rule_matched", "no allow rule matched")], contract
    )


def _value_not_permitted(contract: ContractSpec, binding: Binding) -> dict[str, str] | None:
    """A proposed value outside the values the contract lets the action write is denied."""
    if not (binding.value_bound and binding.proposed_action):
        return None
    allowed = contract.action_values.get(binding.proposed_action)
    if allowed is None or any(same_value(binding.proposed_value, value) for value in allowed):
        return None
    return _reason(
        "value_not_permitted",
        f"{binding.proposed_action} may write {list(allowed)!r}, not {binding.proposed_value!r}",
    )


def _match_detail(expression: str, matched: bool | None) -> str:
    if matched is None:
        return f"condition could not be evaluated (fails closed): {expression}"
    return f"matched: {expression}"


def _decision(
    result: str, permitted: list[str], reasons: list[dict[str, str]], contract: ContractSpec
) -> dict[str, Any]:
    return {
        "result": str(result),
        "permitted_actions": permitted,
        "reasons": reasons,
        "policy_version": contract.policy_version,
    }


def completeness_of(contract: ContractSpec, reads: dict[str, FieldRead]) -> str:
    not_ok = [spec for spec in contract.fields if reads[spec.name].status != ReadStatus.OK]
    if any(spec.required for spec in not_ok):
        return Completeness.INCOMPLETE.value
    if not_ok:
        return Completeness.DEGRADED.value
    return Completeness.COMPLETE.value


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
) -> Outcome:
    """Build the full snapshot content for one decision."""
    reads = {
        read.field: apply_freshness(read, contract.field(read.field).max_age_seconds, valid_time)  # type: ignore[union-attr]
        for read in raw_reads
    }
    contradictions = source_contradictions(binding.subject, reads, evidence)
    decision = decide(contract, binding, reads, evidence, contradictions, capable_actions)

    verdicts: list[dict[str, Any]] = []
    for index, claim in enumerate(claims):
        verdict, reason, supporting = classify(claim, binding, reads, evidence, quarantined_classes)
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
        "schema_version": SCHEMA_VERSION,
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
                reads[spec.name], spec.required, spec.max_age_seconds, field_support[spec.name]
            )
            for spec in contract.fields
        },
        "claims": verdicts,
        "contradictions": contradictions,
        "quarantined_memory_classes": sorted(quarantined_classes),
        "evidence_manifest": [
            {"evidence_id": evidence_id, "hash": hashes[evidence_id]}
            for evidence_id in manifest_ids
        ],
        "cutoffs": {"valid_time": rfc3339(valid_time), "recorded_time": rfc3339(recorded_time)},
    }
    return Outcome(content=content, verdicts=verdicts, contradictions=contradictions)


def _field_content(
    read: FieldRead, required: bool, max_age_seconds: int, support: list[str]
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
    }
