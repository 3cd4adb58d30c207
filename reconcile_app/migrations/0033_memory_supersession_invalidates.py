"""A memory superseding another was drawn in the lineage as derived from it: walked, a
correction of the older record's grounds reached (and tainted) every decision that recalled
the newer one. The link is now recorded as `wasInvalidatedBy` (services/provenance.py), as an
evidence entry's supersession is; this relabels the links already recorded.

A successor that also names the older record in `derived_from` was made from it as well: its
one recorded edge stands for both links and stays a derivation (the unique (src, dst,
relation) key kept a single edge for the two), and the invalidation is added beside it.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations

DERIVED, INVALIDATED = "wasDerivedFrom", "wasInvalidatedBy"
CHUNK = 2000


def relabel(apps: Any, schema_editor: Any) -> int:
    """Returns how many successors' links it changed. Also run, after a rolling upgrade, by
    `manage.py memory_supersessions_relabel` for the links an earlier release drew meanwhile."""
    changed = 0
    memory_model = apps.get_model("reconcile_app", "MemoryRecord")
    node_model = apps.get_model("lineage_app", "Node")
    edge_model = apps.get_model("lineage_app", "Edge")
    successors = (
        memory_model.objects.filter(supersedes__isnull=False)
        .values_list("memory_id", "supersedes__memory_id", "derived_from")
        .order_by("pk")
    )
    for successor, superseded, derived_from in successors.iterator(CHUNK):
        nodes = dict(
            node_model.objects.filter(kind="memory", ref__in=[successor, superseded]).values_list(
                "ref", "pk"
            )
        )
        if successor not in nodes or superseded not in nodes:
            continue
        link = {"src_id": nodes[superseded], "dst_id": nodes[successor]}
        if f"memory:{superseded}" in (derived_from or []):
            edge = edge_model.objects.filter(**link, relation=DERIVED).first()
            if edge is not None:
                _, created = edge_model.objects.get_or_create(
                    **link, relation=INVALIDATED, defaults={"recorded_at": edge.recorded_at}
                )
                changed += created
            continue
        changed += edge_model.objects.filter(**link, relation=DERIVED).update(relation=INVALIDATED)
    return changed


def relabel_back(apps: Any, schema_editor: Any) -> None:
    """For code before this migration, which walks supersession as a derivation: each
    invalidation between a memory and its successor becomes the one derivation edge it was
    (dropped where the successor is also derived from it: that edge already stands)."""
    memory_model = apps.get_model("reconcile_app", "MemoryRecord")
    edge_model = apps.get_model("lineage_app", "Edge")
    successors = (
        memory_model.objects.filter(supersedes__isnull=False)
        .values_list("memory_id", "supersedes__memory_id")
        .order_by("pk")
    )
    for successor, superseded in successors.iterator(CHUNK):
        link = {
            "src__kind": "memory",
            "src__ref": superseded,
            "dst__kind": "memory",
            "dst__ref": successor,
        }
        invalidated = edge_model.objects.filter(**link, relation=INVALIDATED)
        if edge_model.objects.filter(**link, relation=DERIVED).exists():
            invalidated.delete()
        else:
            invalidated.update(relation=DERIVED)


class Migration(migrations.Migration):
    dependencies = [
        ("reconcile_app", "0032_activation_attempts"),
        ("lineage_app", "0002_hot_path_indexes"),
    ]

    operations = [migrations.RunPython(relabel, relabel_back)]
