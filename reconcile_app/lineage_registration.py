"""What reconcile teaches lineage_app, from `ReconcileAppConfig.ready()`: its kinds of node
(how each is drawn, what it is in PROV, where a click opens), the `memory_class` entry point
of the blast-radius API, and the explorer page's words and landing panel.

Module-level functions only: registering is idempotent for the same functions (Django may
call `ready()` twice) and refused for different ones (lineage_app.registry).
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from lineage_app import registry
from reconcile_app.console import node_links
from reconcile_app.selectors.corrections import recent_corrections
from reconcile_app.selectors.lineage import memory_class_known, memory_class_roots

RECENT_CORRECTIONS = 8
# Colours are the console's badge inks (console.css): grey, blue, green, accent, purple,
# amber, red. A receipt is evidence (same colour) drawn in its own column.
SNAPSHOTS_AND_REDUCERS = "Snapshots · reducers"


def short_id(ref: str) -> str:
    """`snap_0123456789abcdef` → `snap_012345…`: the prefix says the kind, six hex digits
    tell ids apart at a glance."""
    head, _, digest = ref.partition("_")
    return f"{head}_{digest[:6]}…" if digest else ref


def read_field(ref: str) -> str:
    """A read (`<snapshot id>/<field>`) is shown by its field."""
    return ref.rpartition("/")[2] or ref


def explorer_start(request: HttpRequest) -> dict[str, Any]:
    return {"recent_corrections": recent_corrections(limit=RECENT_CORRECTIONS)}


def register_with_lineage() -> None:
    """Kinds in the order things happen (the explorer's columns and count rows follow it);
    `search_rank` is the kind a bare id most likely means, snapshots first."""
    register = registry.register_kind
    register(
        "source",
        label="Sources",
        colour="#4b5563",
        symbol="square",
        column=0,
        prov_type="agent",
        search_rank=6,
        url=node_links.source_version_url,
    )
    register(
        "read",
        label="Reads",
        colour="#1d4f9e",
        symbol="diamond",
        column=1,
        search_rank=7,
        url=node_links.read_url,
        short_label=read_field,
        ref_prefixed_by_other_ids=True,
    )
    register(
        "evidence",
        label="Evidence",
        colour="#116b3a",
        symbol="circle",
        column=2,
        search_rank=1,
        url=node_links.evidence_url,
    )
    register(
        "reducer",
        label=SNAPSHOTS_AND_REDUCERS,
        colour="#5b2aa6",
        symbol="hexagon",
        column=3,
        prov_type="activity",
        search_rank=5,
        url=node_links.reducer_url,
    )
    register(
        "snapshot",
        label=SNAPSHOTS_AND_REDUCERS,
        colour="#1d5fd1",
        symbol="square",
        column=3,
        prov_type="activity",
        search_rank=0,
        url=node_links.snapshot_url,
        short_label=short_id,
    )
    register(
        "decision",
        label="Decisions",
        colour="#8a4b00",
        symbol="diamond",
        column=4,
        search_rank=4,
        urls=node_links.decision_urls,
        short_label=short_id,
    )
    register(
        "effect",
        label="Effects",
        colour="#a11a1a",
        symbol="triangle-right",
        column=5,
        prov_type="activity",
        search_rank=2,
        url=node_links.effect_url,
    )
    # Receipts, readbacks and resolutions: evidence an effect generated, in a column of its own.
    register(
        "receipt",
        label="Receipts · readbacks",
        colour="#116b3a",
        symbol="circle",
        column=6,
        variant_of="evidence",
        generated_by="effect",
    )
    register(
        "memory",
        label="Memories",
        colour="#5b2aa6",
        symbol="star",
        column=7,
        search_rank=3,
        url=node_links.memory_url,
    )
    registry.register_entry_point(
        "memory_class", memory_class_roots, phrase="a memory class", known=memory_class_known
    )
    registry.configure_explorer(
        lede=(
            "Where a snapshot, a decision, an effect, a memory or a ledger entry came from, and"
            " everything that depends on it."
        ),
        search_placeholder="snapshot id, evidence id, effect key, memory id or kind:ref",
        search_example="source:case-service@42",
        start_template="reconcile_app/partials/lineage_start.html",
        start_context=explorer_start,
        blast_radius_url=node_links.node_blast_radius_url,
    )
