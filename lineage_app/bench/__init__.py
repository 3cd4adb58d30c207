"""`bench lineage`: recursive-CTE descendants on a 1,000,000-edge lineage graph, next to networkx.

The generator writes a lineage-shaped DAG the way the product records its decisions, subject
by subject, interleaved in time:

    source@version --wasAttributedTo--> read --used--> snapshot --wasDerivedFrom--> decision
    decision --wasDerivedFrom--> effect --wasGeneratedBy--> receipt / readback (evidence)
    evidence (observations, receipts) --used--> later snapshots of the same subject
    reducer version --wasGeneratedBy--> snapshot
    snapshot, evidence, previous memory --wasDerivedFrom--> memory --used--> later snapshots

Snapshots use 3-6 reads and several evidence entries; receipts feed later snapshots, so the
same node is reached along many paths (the case UNION must dedupe). Every edge points from
an older node to a newer one, so the graph is a DAG by construction.

Two roots are built in, deterministically (seeded RNG):
- big: the reducer version that generated the snapshots of a cohort of subjects, sized so
  that its descendants are ~20% of the edge count (~200,000 at 1,000,000 edges);
- small: the standing evidence entry of one subject whose history is long enough for its
  descendants to number ~1,000.

Rows are streamed in chunks: COPY on PostgreSQL, executemany on SQLite, one transaction per
chunk; the networkx graph is built from the same chunks, in the same run.

Modules: `generator` (the graph's shape), `loading` (writing it), `measuring` (timing reach()
against networkx and printing the report). Nothing here imports the host app: the shape
is written out as plain kinds and refs.
"""

from __future__ import annotations

from lineage_app.bench.generator import (
    DEFAULT_EDGES,
    KINDS,
    SEED,
    Generated,
    LineageGenerator,
    Root,
)
from lineage_app.bench.loading import bulk_load, generate
from lineage_app.bench.measuring import DEFAULT_REPEAT, measure, run, verify

__all__ = [
    "DEFAULT_EDGES",
    "DEFAULT_REPEAT",
    "KINDS",
    "SEED",
    "Generated",
    "LineageGenerator",
    "Root",
    "bulk_load",
    "generate",
    "measure",
    "run",
    "verify",
]
