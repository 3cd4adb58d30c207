"""Measuring the benchmark graph: reach() against networkx, and the report `bench lineage`
prints."""

from __future__ import annotations

import gc
import os
import resource
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from io import TextIOBase

import networkx as nx
from django.db import connection

from lineage_app.bench.generator import DEFAULT_EDGES, SEED, Generated, Root
from lineage_app.bench.loading import generate
from lineage_app.models import Edge, Node
from lineage_app.selectors.reach import reach

DEFAULT_REPEAT = 5


def percentiles(samples_ms: list[float]) -> tuple[float, float]:
    """(p50, p95) of the samples, in the samples' unit."""
    ordered = sorted(samples_ms)
    p50 = statistics.median(ordered)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return p50, p95


def timed(action: Callable[[], object], repeat: int) -> list[float]:
    """Milliseconds taken by each of `repeat` runs of `action`."""
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000.0)
    return samples


def maintain() -> float:
    """What a production database has had by the time it is queried: statistics (and vacuum)."""
    started = time.perf_counter()
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            if connection.in_atomic_block:
                cursor.execute(f"ANALYZE {Node._meta.db_table}")
                cursor.execute(f"ANALYZE {Edge._meta.db_table}")
            else:
                cursor.execute(f"VACUUM ANALYZE {Node._meta.db_table}")
                cursor.execute(f"VACUUM ANALYZE {Edge._meta.db_table}")
        else:
            cursor.execute("ANALYZE")
            if not connection.in_atomic_block:
                cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return time.perf_counter() - started


def database_size() -> str:
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT pg_database_size(current_database()), pg_total_relation_size(%s),"
                " pg_total_relation_size(%s), pg_indexes_size(%s)",
                [Node._meta.db_table, Edge._meta.db_table, Edge._meta.db_table],
            )
            database, node, edge, edge_indexes = cursor.fetchone()
            return (
                f"{database / 1e6:,.0f} MB (node table {node / 1e6:,.0f} MB, edge table"
                f" {edge / 1e6:,.0f} MB of which indexes {edge_indexes / 1e6:,.0f} MB)"
            )
        cursor.execute("PRAGMA page_count")
        pages = cursor.fetchone()[0]
        cursor.execute("PRAGMA page_size")
        size = pages * cursor.fetchone()[0]
        return f"{size / 1e6:,.0f} MB (one file, after checkpoint)"


def recursive_step_plan(root: int) -> str:
    """How the engine finds the next edges in the recursive step (which index it uses)."""
    edge = Edge._meta.db_table
    sql = (
        f"WITH RECURSIVE reach(id) AS (SELECT e.dst_id FROM {edge} e WHERE e.src_id IN (%s)"  # noqa: S608  # nosec B608
        f" UNION SELECT e.dst_id FROM {edge} e JOIN reach r ON e.src_id = r.id)"
        f" SELECT COUNT(*) FROM reach"
    )
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(f"EXPLAIN {sql}", [root])
            lines = [row[0].strip().removeprefix("->").strip() for row in cursor.fetchall()]
            return "; ".join(
                line.split("  (cost")[0]
                for line in lines
                if "Scan" in line or "Join" in line or "Loop" in line
            )
        cursor.execute(f"EXPLAIN QUERY PLAN {sql}", [root])
        return "; ".join(row[-1] for row in cursor.fetchall() if row[-1].startswith("SEARCH e"))


@dataclass(frozen=True)
class Measured:
    root: Root
    reached: int
    cte: tuple[float, float]
    networkx: tuple[float, float]
    networkx_gc: tuple[float, float]
    identical: bool


def verify(generated: Generated, root: Root, limit: int = 100) -> tuple[int, bool]:
    """Same node count, counts by kind and first page as networkx descendants."""
    result = reach([root.pk], [root.node], direction="descendants", limit=limit)
    expected = nx.descendants(generated.graph, root.pk)
    by_kind: dict[str, int] = {}
    for pk in expected:
        kind = generated.kind(pk)
        by_kind[kind] = by_kind.get(kind, 0) + 1
    page = sorted(expected, key=lambda pk: (generated.kind(pk), pk))[:limit]
    identical = (
        result.total == len(expected)
        and result.counts == by_kind
        and [node["pk"] for node in result.nodes] == page
    )
    return len(expected), identical


def _frozen_descendants(graph: nx.DiGraph, pk: int) -> set[int]:
    gc.freeze()
    try:
        return nx.descendants(graph, pk)
    finally:
        gc.unfreeze()


def measure(generated: Generated, root: Root, repeat: int) -> Measured:
    """Round-robin over the three ways, so a busy machine slows them alike."""
    reached, identical = verify(generated, root)  # also warms the caches
    graph = generated.graph
    # The graph's ~2 million dicts make each full collection of the cyclic GC cost hundreds
    # of ms, and a traversal allocates enough to trigger them: time networkx with the graph
    # frozen out of the GC (how a long-lived in-memory graph would be kept), and without.
    ways = {
        "cte": lambda: reach([root.pk], [root.node], direction="descendants"),
        "networkx": lambda: _frozen_descendants(graph, root.pk),
        "networkx_gc": lambda: nx.descendants(graph, root.pk),
    }
    samples: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(repeat):
        for name, way in ways.items():
            samples[name] += timed(way, 1)
    return Measured(
        root,
        reached,
        percentiles(samples["cte"]),
        percentiles(samples["networkx"]),
        percentiles(samples["networkx_gc"]),
        identical,
    )


def run(
    out: TextIOBase, repeat: int = DEFAULT_REPEAT, *, edges: int = DEFAULT_EDGES, seed: int = SEED
) -> None:
    vendor = connection.vendor
    load = os.getloadavg()
    out.write(
        f"generating {edges:,} lineage edges ({vendor}, seed {seed}; load average"
        f" {load[0]:.1f} on {os.cpu_count()} CPUs) ...\n"
    )
    generated = generate(edges, seed=seed)
    maintenance_s = maintain()
    rows = generated.nodes + generated.edges
    out.write(
        f"generation: {generated.total_s:.1f} s for {generated.nodes:,} nodes +"
        f" {generated.edges:,} edges = {rows / generated.total_s:,.0f} rows/s (database writes"
        f" {generated.write_s:.1f} s + index and constraint build {generated.index_s:.1f} s,"
        f" networkx build {generated.networkx_s:.1f} s, the rest Python generation);"
        f" {'vacuum ' if vendor == 'postgresql' else ''}analyze {maintenance_s:.1f} s\n"
    )
    out.write(f"database size: {database_size()}\n")
    out.write(f"recursive step: {recursive_step_plan(generated.big.pk)}\n")

    measured = [measure(generated, root, repeat) for root in (generated.big, generated.small)]
    out.write(
        f"\ndescendants, p50 of {repeat} runs. CTE = reach(): counts by kind + first page of 100"
        f" (the walk runs once). networkx = nx.descendants on the same graph, frozen out of the GC"
        f" (nx GC on: without that).\n"
    )
    out.write(
        f"{'engine':<11}{'root':<34}{'reached':>9}{'CTE ms':>9}{'CTE p95':>9}"
        f"{'networkx ms':>12}{'ratio':>8}{'nx GC on':>10}  same\n"
    )
    for item in measured:
        ratio = item.cte[0] / item.networkx[0] if item.networkx[0] else float("inf")
        out.write(
            f"{vendor:<11}{item.root.node:<34}{item.reached:>9,}{item.cte[0]:>9.1f}"
            f"{item.cte[1]:>9.1f}{item.networkx[0]:>12.1f}{ratio:>7.1f}x"
            f"{item.networkx_gc[0]:>10.1f}"
            f"  {'yes' if item.identical else 'NO'}\n"
        )
    if not all(item.identical for item in measured):
        out.write("MISMATCH: the CTE and networkx disagree on the nodes reached\n")
    full = measured[0]
    line = f"full reach ({full.reached:,} nodes): reach() {full.cte[0]:.0f} ms"
    if vendor == "postgresql":
        line += f"; target on PostgreSQL <= 1 s: {'met' if full.cte[0] <= 1000 else 'MISSED'}"
    out.write(line + "\n")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    load = os.getloadavg()
    out.write(
        f"peak memory (whole process, networkx graph included): {peak:,.0f} MB;"
        f" load average now {load[0]:.1f}\n"
    )
