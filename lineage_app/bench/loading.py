"""Writing the benchmark graph: streamed into empty lineage tables with their secondary
indexes and constraints dropped, then rebuilt once (which also checks every row)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import networkx as nx
from django.db import connection, transaction

from lineage_app.bench.generator import (
    BIG_REDUCER,
    DEFAULT_EDGES,
    SEED,
    Generated,
    LineageGenerator,
    Root,
)
from lineage_app.models import Edge, Node

NODE_COLUMNS = ("id", "kind", "ref", "label", "recorded_at")
EDGE_COLUMNS = ("src_id", "dst_id", "relation", "recorded_at")


def _timestamp_format() -> Callable[[int], str]:
    base = datetime(2026, 1, 1, tzinfo=UTC)
    if connection.vendor == "postgresql":
        return lambda step: (base + timedelta(seconds=30 * step)).isoformat()
    # Django stores SQLite datetimes as naive UTC text.
    naive = base.replace(tzinfo=None)
    return lambda step: (naive + timedelta(seconds=30 * step)).isoformat(" ")


def _write(cursor: Any, table: str, columns: tuple[str, ...], rows: list[tuple]) -> None:
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


def _secondary_schema(cursor: Any) -> tuple[list[str], list[str]]:
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
