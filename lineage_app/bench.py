"""`bench lineage`: recursive-CTE descendants on a 1,000,000-edge lineage graph, next to networkx.

The generator writes a lineage-shaped DAG the way the product does (reconcile_app.services.
provenance), subject by subject, interleaved in time:

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
"""

from __future__ import annotations

import gc
import os
import random
import resource
import time
from array import array
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from io import TextIOBase

import networkx as nx
from django.db import connection, transaction

from lineage_app.models import Edge, Node, Relation
from lineage_app.selectors.reach import reach
from reconcile_app.bench.common import percentiles, timed

DEFAULT_EDGES = 1_000_000
SEED = 20261129
DEFAULT_REPEAT = 5
CHUNK_EDGES = 100_000

KINDS = ("decision", "effect", "evidence", "memory", "read", "reducer", "snapshot", "source")
KIND_CODE = {kind: code for code, kind in enumerate(KINDS)}
FIELDS = (
    ("collections_status", "case-service"),
    ("complaint_status", "complaints-service"),
    ("hardship_status", "hardship-register"),
    ("missed_payments", "payments-ledger"),
    ("balance_band", "payments-ledger"),
    ("contact_preference", "contact-prefs"),
    ("kyc_status", "kyc-registry"),
    ("vulnerability_flag", "case-service"),
)
SOURCES = sorted({source for _, source in FIELDS})
BIG_REDUCER = "hardship@3"
SMALL_REDUCER = "collections@1"
OTHER_REDUCERS = ("hardship@2", "collections@1", "collections@2", "complaints@1")

# Calibrated averages of the step below (per snapshot): edges written, and nodes downstream
# of the snapshot itself (snapshot, decision, effects, receipts/readbacks, memory).
EDGES_PER_STEP = 18.2
DOWNSTREAM_PER_STEP = 4.2
MEAN_HISTORY = 9.0
MAX_HISTORY = 120
PLAN_MARGIN = 1.01  # plan 1% more steps than needed; the stream stops at the exact edge count


@dataclass
class Subject:
    name: str
    reducer: int
    standing: int = 0
    observations: list[int] = field(default_factory=list)
    receipts: list[int] = field(default_factory=list)
    memory: int = 0
    steps: int = 0


@dataclass(frozen=True)
class Root:
    pk: int
    node: str
    role: str


@dataclass
class Generated:
    graph: nx.DiGraph
    first_id: int
    kind_of: array  # kind code per node, indexed by pk - first_id
    big: Root
    small: Root
    nodes: int = 0
    edges: int = 0
    write_s: float = 0.0
    index_s: float = 0.0
    networkx_s: float = 0.0
    total_s: float = 0.0

    def kind(self, pk: int) -> str:
        return KINDS[self.kind_of[pk - self.first_id]]


class LineageGenerator:
    """Streams (node rows, edge rows) in chunks of ~100,000 edges; never holds the whole graph.

    Node ids are assigned here (from `first_id`), so edges need no lookups.
    """

    def __init__(
        self, edges: int, seed: int, first_id: int, timestamp: Callable[[int], str]
    ) -> None:
        self.rng = random.Random(seed)  # noqa: S311 - reproducible data, not secrets
        self.target = edges
        self.next_id = first_id
        self.first_id = first_id
        self.kind_of = array("b")
        self.timestamp = timestamp
        self.versions = max(50, edges // 400)
        self.source_ids: dict[tuple[str, int], int] = {}
        self.nodes: list[tuple] = []
        self.edges: list[tuple] = []
        big_share = edges // 5
        self.small_target = max(20, min(1000, edges // 1000))
        self.reducers: dict[str, int] = {}
        self.now = timestamp(0)
        for name in (BIG_REDUCER, *OTHER_REDUCERS):
            if name not in self.reducers:
                self.reducers[name] = self._node("reducer", name, f"reducer {name}")
        self.subjects, self.order = self._plan(big_share)

    # -- planning -----------------------------------------------------------------------------

    def _plan(self, big_share: int) -> tuple[list[Subject], list[int]]:
        """Subject histories: subject 0 is the small root's; a cohort reaches the big share."""
        rng = self.rng
        histories = [max(2, round(self.small_target / DOWNSTREAM_PER_STEP))]
        subjects = [Subject("account-000000", self.reducers[SMALL_REDUCER])]
        planned_edges = histories[0] * EDGES_PER_STEP
        big_planned = 0.0
        while planned_edges < self.target * PLAN_MARGIN:
            length = min(MAX_HISTORY, 1 + int(rng.expovariate(1 / MEAN_HISTORY)))
            if big_planned < big_share * PLAN_MARGIN:
                reducer = BIG_REDUCER
                big_planned += length * DOWNSTREAM_PER_STEP
            else:
                reducer = rng.choice(OTHER_REDUCERS)
            subjects.append(Subject(f"account-{len(subjects):06d}", self.reducers[reducer]))
            histories.append(length)
            planned_edges += length * EDGES_PER_STEP
        order = [index for index, length in enumerate(histories) for _ in range(length)]
        rng.shuffle(order)
        return subjects, order

    # -- rows ---------------------------------------------------------------------------------

    def _node(self, kind: str, ref: str, label: str) -> int:
        pk = self.next_id
        self.next_id += 1
        self.nodes.append((pk, kind, ref, label, self.now))
        self.kind_of.append(KIND_CODE[kind])
        return pk

    def _edge(self, src: int, dst: int, relation: str) -> None:
        self.edges.append((src, dst, relation, self.now))

    def _hex(self) -> str:
        return f"{self.rng.getrandbits(128):032x}"

    def _source(self, source: str) -> int:
        key = (source, self.rng.randrange(self.versions))
        pk = self.source_ids.get(key)
        if pk is None:
            pk = self._node("source", f"{source}@{key[1]}", f"{source} version {key[1]}")
            self.source_ids[key] = pk
        return pk

    def _step(self, subject: Subject) -> None:
        rng = self.rng
        first = subject.steps == 0
        subject.steps += 1
        if first:
            subject.standing = self._node(
                "evidence", f"ev-{subject.name}-open", f"{subject.name}: HardshipApproved"
            )
            self._edge(
                self._source("hardship-register"), subject.standing, Relation.WAS_DERIVED_FROM
            )
        if first or rng.random() < 0.4:
            observation = self._node(
                "evidence", f"ev_{self._hex()}", f"{subject.name}: observation"
            )
            if rng.random() < 0.5:
                self._edge(
                    self._source(rng.choice(SOURCES)), observation, Relation.WAS_DERIVED_FROM
                )
            subject.observations = [*subject.observations, observation][-2:]

        snapshot_ref = f"snap_{self._hex()}"
        allow = rng.random() < 0.8
        snapshot = self._node(
            "snapshot",
            snapshot_ref,
            f"collections-contact-release {subject.name}: {'allow' if allow else 'deny'}",
        )
        for field_name, source in rng.sample(FIELDS, rng.randint(3, 6)):
            read = self._node("read", f"{snapshot_ref}/{field_name}", f"{field_name} = 'x' (ok)")
            if rng.random() < 0.9:
                self._edge(self._source(source), read, Relation.WAS_ATTRIBUTED_TO)
            self._edge(read, snapshot, Relation.USED)
        for evidence in dict.fromkeys([subject.standing, *subject.observations, *subject.receipts]):
            self._edge(evidence, snapshot, Relation.USED)
        if subject.memory and rng.random() < 0.5:
            self._edge(subject.memory, snapshot, Relation.USED)
        self._edge(subject.reducer, snapshot, Relation.WAS_GENERATED_BY)

        decision = self._node(
            "decision", f"dec_{self._hex()}", "allow release_collections_hold" if allow else "deny"
        )
        self._edge(snapshot, decision, Relation.WAS_DERIVED_FROM)
        effects = rng.choices((0, 1, 2), weights=(20, 65, 15))[0] if allow else 0
        receipts: list[int] = []
        for _ in range(effects):
            effect = self._node("effect", f"idem-{self._hex()}", "release_collections_hold")
            self._edge(decision, effect, Relation.WAS_DERIVED_FROM)
            for what, chance in (("receipt", 1.0), ("readback", 0.5)):
                if rng.random() < chance:
                    evidence = self._node("evidence", f"ev_{self._hex()}", what)
                    self._edge(effect, evidence, Relation.WAS_GENERATED_BY)
                    receipts.append(evidence)
        if receipts:
            subject.receipts = receipts[-2:]

        if rng.random() < 0.3:
            memory = self._node("memory", f"mem_{self._hex()}", "episodic collections_status")
            self._edge(snapshot, memory, Relation.WAS_DERIVED_FROM)
            pool = list(dict.fromkeys([*subject.observations, *subject.receipts]))
            for evidence in rng.sample(pool, min(len(pool), rng.randint(1, 2))):
                self._edge(evidence, memory, Relation.WAS_DERIVED_FROM)
            if subject.memory and rng.random() < 0.7:
                self._edge(subject.memory, memory, Relation.WAS_DERIVED_FROM)
            subject.memory = memory

    def chunks(self, chunk_edges: int = CHUNK_EDGES) -> Iterator[tuple[list[tuple], list[tuple]]]:
        """Chunks of (node rows, edge rows); exactly `target` edges in all."""
        written = 0
        index = 0
        while written < self.target:
            if index < len(self.order):
                self.now = self.timestamp(index)
                self._step(self.subjects[self.order[index]])
                index += 1
            else:
                # Plan exhausted early (rare): late observations derived from source versions.
                self.now = self.timestamp(index)
                late = self._node("evidence", f"ev_{self._hex()}", "late observation")
                self._edge(self._source(self.rng.choice(SOURCES)), late, Relation.WAS_DERIVED_FROM)
            if written + len(self.edges) >= self.target:
                del self.edges[self.target - written :]
            if len(self.edges) >= chunk_edges or written + len(self.edges) >= self.target:
                written += len(self.edges)
                yield self.nodes, self.edges
                self.nodes, self.edges = [], []
        if self.nodes:
            yield self.nodes, []
            self.nodes = []


# -- writing --------------------------------------------------------------------------------

NODE_COLUMNS = ("id", "kind", "ref", "label", "recorded_at")
EDGE_COLUMNS = ("src_id", "dst_id", "relation", "recorded_at")


def _timestamp_format() -> Callable[[int], str]:
    base = datetime(2026, 1, 1, tzinfo=UTC)
    if connection.vendor == "postgresql":
        return lambda step: (base + timedelta(seconds=30 * step)).isoformat()
    # Django stores SQLite datetimes as naive UTC text.
    naive = base.replace(tzinfo=None)
    return lambda step: (naive + timedelta(seconds=30 * step)).isoformat(" ")


def _write(cursor, table: str, columns: tuple[str, ...], rows: list[tuple]) -> None:
    if not rows:
        return
    if connection.vendor == "postgresql":
        with cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
    else:
        placeholders = ", ".join(["%s"] * len(columns))
        cursor.executemany(
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({placeholders})",  # noqa: S608  # nosec B608
            rows,
        )


def _secondary_schema(cursor) -> tuple[list[str], list[str]]:
    """(drop, recreate) statements for the lineage tables' secondary indexes and constraints.

    Read from the catalog, so what is recreated is exactly what the migrations built (names,
    DEFERRABLE foreign keys). Primary keys stay: ids arrive in order, which is cheap.
    """
    tables = (Edge._meta.db_table, Node._meta.db_table)  # edge first: its FKs point at node
    drop: list[str] = []
    indexes: list[str] = []
    constraints: list[str] = []
    if connection.vendor == "postgresql":
        for table in tables:
            cursor.execute(
                "SELECT conname, contype, pg_get_constraintdef(oid) FROM pg_constraint"
                " WHERE conrelid = %s::regclass AND contype IN ('f', 'u') ORDER BY contype DESC",
                [table],
            )
            for name, _, definition in cursor.fetchall():
                drop.append(f'ALTER TABLE {table} DROP CONSTRAINT "{name}"')
                constraints.append(f'ALTER TABLE {table} ADD CONSTRAINT "{name}" {definition}')
            cursor.execute(
                "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema()"
                " AND tablename = %s AND indexname NOT IN"
                " (SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass)",
                [table, table],
            )
            for name, definition in cursor.fetchall():
                drop.append(f'DROP INDEX "{name}"')
                indexes.append(definition)
        # Unique constraints ('u') before foreign keys ('f'), each table's indexes first.
        constraints.sort(key=lambda sql: " FOREIGN KEY " in sql)
    else:
        # SQLite keeps UNIQUE constraints inline (their autoindexes cannot be dropped).
        cursor.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
            " AND tbl_name IN (%s, %s)",
            list(tables),
        )
        for name, definition in cursor.fetchall():
            drop.append(f'DROP INDEX "{name}"')
            indexes.append(definition)
    return drop, indexes + constraints


@contextmanager
def bulk_load() -> Iterator[list[float]]:
    """Load into empty lineage tables without their secondary indexes and constraints.

    Maintaining five indexes on the edge table and checking two deferred foreign keys per row
    costs several times the load itself; building them once afterwards (which also checks
    uniqueness and every foreign key) does not. Yields a list that receives the rebuild time.
    """
    if Node.objects.exists() or Edge.objects.exists():
        raise RuntimeError("the lineage benchmark loads into empty lineage tables only")
    rebuild: list[float] = []
    with connection.cursor() as cursor:
        drop, recreate = _secondary_schema(cursor)
        with transaction.atomic():
            for sql in drop:
                cursor.execute(sql)
    try:
        yield rebuild
    finally:
        started = time.perf_counter()
        with transaction.atomic(), connection.cursor() as cursor:
            for sql in recreate:
                cursor.execute(sql)
        rebuild.append(time.perf_counter() - started)


def generate(edges: int = DEFAULT_EDGES, *, seed: int = SEED) -> Generated:
    """Write the graph into the (empty) lineage tables and build the same graph in networkx."""
    started = time.perf_counter()
    node_table, edge_table = Node._meta.db_table, Edge._meta.db_table
    first_id = 1
    generator = LineageGenerator(edges, seed, first_id, _timestamp_format())
    graph = nx.DiGraph()
    write_s = networkx_s = 0.0
    nodes = written = 0
    with bulk_load() as rebuild:
        for node_rows, edge_rows in generator.chunks():
            began = time.perf_counter()
            with transaction.atomic(), connection.cursor() as cursor:
                _write(cursor, node_table, NODE_COLUMNS, node_rows)
                _write(cursor, edge_table, EDGE_COLUMNS, edge_rows)
            wrote = time.perf_counter()
            graph.add_nodes_from(row[0] for row in node_rows)
            graph.add_edges_from((row[0], row[1]) for row in edge_rows)
            networkx_s += time.perf_counter() - wrote
            write_s += wrote - began
            nodes += len(node_rows)
            written += len(edge_rows)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            # Node ids were given explicitly: move the identity past them for later inserts.
            cursor.execute(
                "SELECT setval(pg_get_serial_sequence(%s, 'id'), %s)",
                [node_table, generator.next_id - 1],
            )
    small_subject = generator.subjects[0]
    return Generated(
        graph=graph,
        first_id=first_id,
        kind_of=generator.kind_of,
        big=Root(generator.reducers[BIG_REDUCER], f"reducer:{BIG_REDUCER}", "reducer version"),
        small=Root(
            small_subject.standing, f"evidence:ev-{small_subject.name}-open", "evidence entry"
        ),
        nodes=nodes,
        edges=written,
        write_s=write_s,
        index_s=rebuild[0],
        networkx_s=networkx_s,
        total_s=time.perf_counter() - started,
    )


# -- measuring ------------------------------------------------------------------------------


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
