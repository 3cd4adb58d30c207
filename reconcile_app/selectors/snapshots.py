"""Reads of snapshots, contradictions, evidence and memories, shaped for API and console."""

from __future__ import annotations

from typing import Any

from django.db.models import Prefetch, QuerySet

from reconcile_app.canonical import rfc3339
from reconcile_app.errors import NotFound
from reconcile_app.models import DecisionSnapshot, Escalation
from reconcile_app.roles import is_staff_role
from reconcile_app.selectors.approvals import (
    approved_window_start,
    commit_deadline,
    snapshot_approval,
    snapshot_relations,
    unseen_state,
)
from reconcile_app.selectors.contradictions import contradiction_representation


def snapshots_visible_to(user: Any) -> QuerySet[DecisionSnapshot]:
    """People in a role see every snapshot; an agent sees the ones it asked for."""
    snapshots = DecisionSnapshot.objects.select_related("principal", "contract").prefetch_related(
        "contradictions_seen__resolved_by",
        "escalations",
        # A retry that joined the escalation is compared with the escalation's own snapshot
        # (approvals.unseen_state): read with it, not once per row.
        Prefetch("joined_escalations", queryset=Escalation.objects.select_related("snapshot")),
        "taints__correction",
    )
    if is_staff_role(user):
        return snapshots
    return snapshots.filter(principal__user=user)


def console_snapshots() -> QuerySet[DecisionSnapshot]:
    """Every snapshot, newest first, for people's lists. No joins: a row reads `content`."""
    return DecisionSnapshot.objects.order_by("-issued_at", "-id")


def snapshot_get(*, user: Any, snapshot_id: str) -> DecisionSnapshot:
    snapshot = snapshots_visible_to(user).filter(snapshot_id=snapshot_id).first()
    if snapshot is None:
        raise NotFound(f"no snapshot {snapshot_id}", code="snapshot_not_found")
    return snapshot


def snapshot_representation(snapshot: DecisionSnapshot) -> dict[str, Any]:
    """The API shape of a snapshot, built from its stored (hashed) content."""
    content = snapshot.content
    relations = snapshot_relations(snapshot)
    approval = snapshot_approval(snapshot, relations)
    return {
        "snapshot_id": snapshot.snapshot_id,
        "content_hash": snapshot.content_hash,
        "issued_at": rfc3339(snapshot.issued_at),
        "principal": content["binding"]["principal"],
        "subject": snapshot.subject,
        "purpose": snapshot.purpose,
        "decision_class": snapshot.decision_class,
        "proposed_action": snapshot.proposed_action,
        **(
            {"proposed_value": content["binding"]["proposed_value"]}
            if "proposed_value" in content["binding"]
            else {}
        ),
        "completeness": content["completeness"],
        "decision": content["decision"],
        "fields": content["fields"],
        "claims": content["claims"],
        "contradictions": [
            contradiction_representation(row, snapshot.snapshot_id)
            for row in relations.contradictions_seen
        ],
        "actions": snapshot_actions(snapshot, approval),
        "escalation_id": approval.escalation_id if approval is not None else None,
        "contract": {
            "decision_class": content["contract"]["decision_class"],
            "version": content["contract"]["version"],
        },
        "reducer_version": content["reducer_version"],
        "cutoffs": content["cutoffs"],
        "ledger_seq": content.get("ledger_seq"),
        "evidence_manifest": content["evidence_manifest"],
        # Corrections downstream of which this snapshot sits (the snapshot itself is immutable).
        "tainted_by": relations.tainted_by,
    }


def snapshot_actions(
    snapshot: DecisionSnapshot, approval: Escalation | None
) -> dict[str, dict[str, Any]]:
    """How to act on each permitted action: the field it writes, the If-Match to send (the
    version the snapshot read) and the last moment a commit is accepted. An `escalate`
    snapshot has one once its escalation is approved: the proposed action, its window counted
    from the approval (`approval`: the snapshot's, selectors/approvals.snapshot_approval)."""
    content = snapshot.content
    contract = snapshot.contract
    declared = contract.document.get("actions", {})
    deadline = commit_deadline(snapshot, snapshot.issued_at)
    committable = content["decision"]["permitted_actions"]
    approved_at = approved_window_start(snapshot, approval)
    if approved_at is not None:
        deadline = commit_deadline(snapshot, approved_at)
        committable = [snapshot.proposed_action]
    actions = {}
    if "proposed_value" in content["binding"]:
        # A bound value is authorised for the proposed action alone.
        committable = [name for name in committable if name == snapshot.proposed_action]
    for name in committable:
        field = declared.get(name, {}).get("field")
        read = content["fields"].get(field) if field else None
        if read is None:
            continue
        if (
            approved_at is not None
            and approval is not None
            and unseen_state(snapshot, approval, field) is not None
        ):
            continue  # joined the escalation at a state the reviewer did not see
        actions[name] = {
            "field": field,
            "if_match": f'"{read["version"]}"',
            "commit_deadline": rfc3339(deadline),
        }
    return actions
