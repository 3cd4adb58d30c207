"""Where a lineage node opens in reconcile's console.

Snapshots, effects, evidence and memories have their own pages; a read opens its snapshot; a
decision opens the snapshot it was made on; a source version or a reducer opens its blast
radius; anything else re-centres the explorer on it. lineage_app's explorer learns these at
start-up (`reconcile_app.lineage_registration`); reconcile's own pages call them directly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import quote, urlencode

from django.urls import reverse

from lineage_app.console.links import explorer_url
from reconcile_app.selectors.blast_radius import ReviewRow
from reconcile_app.selectors.lineage import snapshots_of_decisions


def blast_url(**params: Any) -> str:
    """The blast-radius page for the entry points given (`reducer=`, `source=`, `node=`…)."""
    return f"{reverse('console-blast-radius')}?{urlencode(params, safe=':@')}"


def node_blast_radius_url(node_id: str) -> str:
    """The blast-radius page of one node (the explorer's "blast radius" link)."""
    return f"{reverse('console-blast-radius')}?node={quote(node_id, safe=':@')}"


def snapshot_url(snapshot_id: str) -> str:
    return reverse("console-snapshot", args=[snapshot_id])


def read_url(ref: str) -> str:
    """A read (`<snapshot id>/<field>`) opens its snapshot's fields."""
    snapshot_id, _, _ = ref.partition("/")
    return f"{snapshot_url(snapshot_id)}#fields"


def effect_url(idempotency_key: str) -> str:
    return reverse("console-effect", args=[idempotency_key])


def evidence_url(evidence_id: str) -> str:
    return reverse("console-evidence", args=[evidence_id])


def reducer_url(reducer_version: str) -> str:
    return blast_url(reducer=reducer_version)


def source_version_url(ref: str) -> str | None:
    """`<source>@<version>` opens the blast radius of that one version."""
    name, _, version = ref.rpartition("@")
    if name and version.isdigit():
        return blast_url(source=name, from_version=version, to_version=version)
    return None


def memory_url(memory_id: str) -> str:
    """A memory opens its own page (which links its fact, its promotion and its lineage)."""
    return reverse("console-memory", args=[memory_id])


def decision_urls(decision_ids: Sequence[str]) -> dict[str, str]:
    """Decisions open the snapshot they were made on (one query for them all)."""
    return {
        decision_id: snapshot_url(snapshot_id)
        for decision_id, snapshot_id in snapshots_of_decisions(decision_ids).items()
    }


_NO_LOOKUP = {
    "snapshot": snapshot_url,
    "read": read_url,
    "effect": effect_url,
    "evidence": evidence_url,
    "memory": memory_url,
    "reducer": reducer_url,
    "source": source_version_url,
}


def node_url(kind: str, ref: str) -> str:
    """Where a node opens when nothing needs looking up (a decision re-centres the
    explorer)."""
    page = _NO_LOOKUP.get(kind)
    return (page(ref) if page is not None else None) or explorer_url(f"{kind}:{ref}")


def review_row_url(row: ReviewRow) -> str:
    """Where a blast-radius row opens: its object, when the row read it, says more."""
    if row.kind == "decision" and row.obj is not None:
        return snapshot_url(row.obj.snapshot.snapshot_id)
    return node_url(row.kind, row.ref)
