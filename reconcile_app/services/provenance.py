"""Which lineage edges each persisted object brings (called inside its transaction)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lineage_app.choices import Relation
from lineage_app.services.graph import Link, graph_record
from reconcile_app.choices import ReadStatus, Verdict
from reconcile_app.services.references import split_reference


def ref_node(reference: str) -> str:
    kind, ref = split_reference(reference)
    return f"{kind}:{ref}"


def snapshot_links(
    *, snapshot_id: str, decision_id: str, content: dict[str, Any]
) -> tuple[list[Link], dict[str, str]]:
    """The lineage a snapshot brings, and the labels of its nodes (for `graph_record`, or the
    snapshot's one-statement write, services/snapshot_statement.py)."""
    snapshot = f"snapshot:{snapshot_id}"
    decision = f"decision:{decision_id}"
    links = [Link(snapshot, decision, Relation.WAS_DERIVED_FROM)]
    labels = {
        snapshot: f"{content['contract']['decision_class']} {content['binding']['subject']}: "
        f"{content['decision']['result']}",
        decision: f"{content['decision']['result']} {content['binding']['proposed_action']}",
    }
    for field, read in content["fields"].items():
        read_node = f"read:{snapshot_id}/{field}"
        links.append(Link(read_node, snapshot, Relation.USED))
        labels[read_node] = f"{field} = {read['value']!r} ({read['status']})"
        if read["version"] is not None and read["status"] in (ReadStatus.OK, ReadStatus.STALE):
            source = f"source:{read['source']}@{read['version']}"
            links.append(Link(source, read_node, Relation.WAS_ATTRIBUTED_TO))
    for item in content["evidence_manifest"]:
        links.append(Link(f"evidence:{item['evidence_id']}", snapshot, Relation.USED))
    for claim in content["claims"]:
        # A recalled record fed this decision (docs/api.md "Reconcile"), unless it was
        # quarantined: then the snapshot did not use it, and nothing new descends from it.
        if claim.get("memory_id") and claim["verdict"] != Verdict.QUARANTINED:
            links.append(Link(f"memory:{claim['memory_id']}", snapshot, Relation.USED))
    if content.get("reducer_version"):
        links.append(
            Link(f"reducer:{content['reducer_version']}", snapshot, Relation.WAS_GENERATED_BY)
        )
    return links, labels


def effect_lineage(*, decision_id: str, idempotency_key: str, action: str) -> None:
    effect = f"effect:{idempotency_key}"
    graph_record(
        [Link(f"decision:{decision_id}", effect, Relation.WAS_DERIVED_FROM)],
        labels={effect: action},
    )


def memory_lineage(
    *, memory_id: str, derived_from: Iterable[str], supersedes: str | None, label: str
) -> None:
    memory = f"memory:{memory_id}"
    links = [
        Link(ref_node(reference), memory, Relation.WAS_DERIVED_FROM) for reference in derived_from
    ]
    if supersedes:
        # The superseded record wasInvalidatedBy its successor, as a superseded evidence entry
        # is: the successor replaces it and is not made from it (memory_taint weighs its
        # grounds the same way). Drawn as a derivation, a correction of the older record's
        # grounds reached, and tainted, every decision that recalled the newer one.
        links.append(Link(f"memory:{supersedes}", memory, Relation.WAS_INVALIDATED_BY))
    graph_record(links, labels={memory: label})


def evidence_lineage(
    *,
    evidence_id: str,
    derived_from: Iterable[str],
    revokes: str | None,
    supersedes: str | None,
    label: str,
    generated_by: str | None = None,
) -> None:
    """`generated_by`: the idempotency key of the effect whose receipt, readback or
    resolution the entry is (recorded with the rest: one write of the graph, not two)."""
    evidence = f"evidence:{evidence_id}"
    links = [
        Link(ref_node(reference), evidence, Relation.WAS_DERIVED_FROM) for reference in derived_from
    ]
    for target in (revokes, supersedes):
        if target:
            # The corrected entry wasInvalidatedBy the correction.
            links.append(Link(f"evidence:{target}", evidence, Relation.WAS_INVALIDATED_BY))
    if generated_by:
        links.append(Link(f"effect:{generated_by}", evidence, Relation.WAS_GENERATED_BY))
    if links:
        graph_record(links, labels={evidence: label})
