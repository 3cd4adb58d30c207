from __future__ import annotations

from django.db import models

from lineage_app.choices import Relation


class Node(models.Model):
    """Every persisted object that lineage can reach, named `kind:ref` (docs/api.md).

    Insert only. `label` is a short human description for graph hover text.
    """

    # Indexed by the (kind, ref) constraint, which leads with it.
    kind = models.CharField(max_length=40)
    ref = models.CharField(max_length=250)
    label = models.CharField(max_length=300, blank=True, default="")
    recorded_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["kind", "ref"], name="node_kind_ref")]

    def __str__(self) -> str:
        return self.node_id

    @property
    def node_id(self) -> str:
        return f"{self.kind}:{self.ref}"


class Edge(models.Model):
    """`src` → `dst`: dst depends on src (descendants follow edges forward).

    Insert only, written in the same transaction as the object that creates it, so the graph
    never shows an object without its provenance or a provenance without its object.
    """

    # Neither key has an index of its own: the (src, dst, relation) constraint leads with
    # `src` and the (dst, src) index with `dst`, and each index costs every reconcile a write.
    src = models.ForeignKey(
        Node, on_delete=models.PROTECT, related_name="edges_out", db_index=False
    )
    dst = models.ForeignKey(Node, on_delete=models.PROTECT, related_name="edges_in", db_index=False)
    relation = models.CharField(max_length=20, choices=Relation.choices)
    recorded_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["src", "dst", "relation"], name="edge_unique")
        ]
        indexes = [models.Index(fields=["dst", "src"])]

    def __str__(self) -> str:
        return f"{self.src_id} -{self.relation}-> {self.dst_id}"
