"""The lineage graph's edges as (src, dst, relation) node ids, for tests that check what a
write recorded."""

from __future__ import annotations

from lineage_app.models import Edge


def edges() -> set[tuple[str, str, str]]:
    return {
        (f"{src_kind}:{src_ref}", f"{dst_kind}:{dst_ref}", relation)
        for src_kind, src_ref, dst_kind, dst_ref, relation in Edge.objects.values_list(
            "src__kind", "src__ref", "dst__kind", "dst__ref", "relation"
        )
    }
