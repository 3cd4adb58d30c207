"""The rows a snapshot is issued with, built once from its canonical content for either way
of writing them (services/snapshots.py: the ORM transaction; services/snapshot_statement.py:
PostgreSQL's one statement)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from reconcile_app.choices import ContradictionStatus
from reconcile_app.models import Principal, Source
from reconcile_app.reconciliation.types import ContractSpec
from reconcile_app.services.conflicts import contradiction_signature


@dataclass
class SnapshotRows:
    """The rows a snapshot is issued with, by column (attname), with Python values; the
    snapshot's own row id, which they all refer to, is left out until it exists."""

    snapshot: dict[str, Any]
    reads: list[dict[str, Any]]
    verdicts: list[dict[str, Any]]
    receipt: dict[str, Any]
    # One per disagreement, by signature: a retry seeing it again joins the open row.
    contradictions: dict[str, dict[str, Any]]


def snapshot_rows(
    *,
    principal: Principal,
    spec: ContractSpec,
    sources: dict[str, Source],
    content: dict,
    issued_at: datetime,
    digest: str,
) -> SnapshotRows:
    binding = content["binding"]
    decision = content["decision"]
    return SnapshotRows(
        snapshot={
            "snapshot_id": f"snap_{digest[:32]}",
            "content_hash": digest,
            "principal_id": principal.pk,
            "contract_id": spec.pk,
            "subject": binding["subject"],
            "purpose": binding["purpose"],
            "decision_class": binding["decision_class"],
            "proposed_action": binding["proposed_action"],
            "result": decision["result"],
            "completeness": content["completeness"],
            "policy_version": decision["policy_version"],
            "reducer_version": content["reducer_version"] or "",
            "schema_version": content["schema_version"],
            "valid_time_cutoff": issued_at,
            "recorded_time_cutoff": issued_at,
            "issued_at": issued_at,
            "content": content,
        },
        reads=[
            {
                "field": name,
                "source_id": sources[item["source"]].pk,
                "required": item["required"],
                "status": item["status"],
                "value": item["value"],
                "version": item["version"],
                "observed_at": item["observed_at"],
                "valid_from": item["valid_from"],
                "recorded_at": item["recorded_at"],
                "read_at": item["read_at"],
                "max_age_seconds": item["max_age_seconds"],
                "consistency": item["consistency"],
                "evidence": item["evidence"],
                "detail": item["detail"][:500],
            }
            for name, item in content["fields"].items()
        ],
        verdicts=[
            {
                "index": item["index"],
                "subject": item["subject"],
                "field": item["field"],
                "value": item["value"],
                "written_at": item["written_at"],
                "memory_class": item["memory_class"],
                "purpose": item["purpose"],
                "derived_from": item["derived_from"],
                "note": item["note"],
                "memory_id": item.get("memory_id", ""),
                "verdict": item["verdict"],
                "reason": item["reason"],
                "evidence": item["evidence"],
            }
            for item in content["claims"]
        ],
        receipt={
            "decision_id": f"dec_{digest[:32]}",
            "proposed_action": binding["proposed_action"],
            "result": decision["result"],
            "permitted_actions": decision["permitted_actions"],
            "reasons": decision["reasons"],
            "policy_version": decision["policy_version"],
            "issued_at": issued_at,
        },
        contradictions={
            row["signature"]: row
            for row in (_contradiction_row(item, issued_at) for item in content["contradictions"])
        },
    )


def _contradiction_row(item: dict[str, Any], issued_at: datetime) -> dict[str, Any]:
    return {
        "signature": contradiction_signature(item),
        "kind": item["kind"],
        "subject": item["subject"],
        "field": item["field"],
        "state_value": item["state"]["value"],
        "state_source": item["state"]["source"],
        "state_ref": item["state"]["ref"],
        "other_value": item["other"]["value"],
        "other_source": item["other"]["source"],
        "other_ref": item["other"]["ref"],
        "detail": item["detail"][:300],
        "status": ContradictionStatus.OPEN.value,
        "detected_at": issued_at,
        "last_seen_at": issued_at,
        "resolution_note": "",
    }
