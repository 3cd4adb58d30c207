"""A snapshot and everything issued with it, written by one PostgreSQL statement.

The gate writes a snapshot, its reads, verdicts, receipt, timing, contradictions and lineage
on every reconcile. Written as a transaction of ORM statements, that cost eight round trips
(BEGIN, the quarantine check, the snapshot, the lineage nodes, the contradictions, the rest,
COMMIT) and more Python per row than the database spent on them. Here they are one statement with
data-modifying CTEs, sent in autocommit: a single statement is atomic by itself, so the
snapshot is still wholly there or not at all, with no BEGIN or COMMIT to send.

Rows travel as one JSON document per table, which `jsonb_populate_recordset` turns into the
table's own row type: PostgreSQL parses the timestamps, and JSON columns keep what was sent
(a JSON null becomes SQL NULL, as the ORM stores None). Identifiers come from the models'
metadata; every value is a parameter.

Escalations (which join or open an escalation under its own lock) and SQLite take the ORM
path in services/snapshots.py; both paths build their rows with `snapshot_rows`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from contextlib import nullcontext
from datetime import date, datetime
from typing import Any

from django.db import DatabaseError, connection, models, transaction

from config.prepared_cursor import prepared_cursor
from lineage_app.models import Edge, Node
from lineage_app.services.graph import Link, split_node_id
from reconcile_app.choices import ContradictionStatus
from reconcile_app.errors import Conflict
from reconcile_app.models import (
    ClaimVerdict,
    Contradiction,
    DecisionReceipt,
    DecisionSnapshot,
    QuarantineEpoch,
    ReconcileTiming,
    StateRead,
)
from reconcile_app.services.snapshot_rows import SnapshotRows
from reconcile_app.services.timings import request_timing

# `reconcile_abort()` (migration 0025) raises with this SQLSTATE: the statement is undone.
ABORT_SQLSTATE = "RC001"
# Attempts when a lineage node another transaction committed meanwhile was not visible.
ATTEMPTS_ON_NODE_RACE = 3


def _quote(name: str) -> str:
    return f'"{name}"'


def _columns(model: type[models.Model]) -> list[str]:
    return [
        field.column
        for field in model._meta.concrete_fields
        if not isinstance(field, models.AutoField)
    ]


def _insert_from_json(model: type[models.Model], param: str, returning: str = "") -> str:
    """INSERT the rows of a JSON array parameter into `model`'s table, each pointing at the
    snapshot this statement inserts (its `snapshot_id` column is taken from `snap`)."""
    table = model._meta.db_table
    columns = _columns(model)
    values = ", ".join(
        "snap.id" if column == "snapshot_id" else f"r.{_quote(column)}" for column in columns
    )
    return (
        f"INSERT INTO {table} ({', '.join(map(_quote, columns))}) "  # noqa: S608  # nosec B608
        f"SELECT {values} FROM jsonb_populate_recordset(NULL::{table}, {param}::jsonb) AS r, "
        f"snap{returning}"
    )


# Each row the statement returns: a contradiction it saw, one column per field in the
# model's order (named, not `seen.*`, whose order is the migrations'), then the snapshot's
# key and the race check. The rows are read by position from this layout, which
# `cursor.description` would only describe again on every call.
_SEEN_FIELDS = Contradiction._meta.concrete_fields
_SNAPSHOT_PK = len(_SEEN_FIELDS)
_SEEN_ID = next(index for index, field in enumerate(_SEEN_FIELDS) if field.primary_key)
# The snapshot's columns in the model's order (what `Model.from_db` takes), its key among them.
_SNAPSHOT_COLUMNS = [field.attname for field in DecisionSnapshot._meta.concrete_fields]
_SNAPSHOT_KEY = DecisionSnapshot._meta.pk.attname  # type: ignore[union-attr]


def _statement(*, guarded: bool) -> str:
    snapshot = DecisionSnapshot._meta.db_table
    snapshot_columns = ", ".join(map(_quote, _columns(DecisionSnapshot)))
    contradiction = Contradiction._meta.db_table
    seen_in = Contradiction.seen_in.through._meta.db_table
    node, edge = Node._meta.db_table, Edge._meta.db_table
    seen_columns = ", ".join(f"seen.{_quote(field.column)}" for field in _SEEN_FIELDS)
    # The quarantine view the decision used must still be current: FOR SHARE waits for a
    # quarantine being created or lifted to commit, so the snapshot is committed before it
    # or sees it (services/quarantine.epoch_check). A moved epoch inserts nothing at all.
    guard = (
        f"guard AS (SELECT epoch FROM {QuarantineEpoch._meta.db_table} WHERE id = 1 FOR SHARE), "  # noqa: S608  # nosec B608
        if guarded
        else ""
    )
    guard_where = "WHERE COALESCE((SELECT epoch FROM guard), 0) = %(epoch)s " if guarded else ""
    return (
        f"WITH {guard}"  # noqa: S608  # nosec B608 - identifiers from the models' metadata
        f"snap AS (INSERT INTO {snapshot} ({snapshot_columns}) "
        f"SELECT {snapshot_columns} FROM jsonb_populate_record(NULL::{snapshot}, "
        f"%(snapshot)s::jsonb) AS r {guard_where}RETURNING id), "
        f"reads AS ({_insert_from_json(StateRead, '%(reads)s')}), "
        f"verdicts AS ({_insert_from_json(ClaimVerdict, '%(verdicts)s')}), "
        f"receipt AS ({_insert_from_json(DecisionReceipt, '%(receipt)s')}), "
        f"timing AS ({_insert_from_json(ReconcileTiming, '%(timing)s')}), "
        # Lineage: nodes are created on first mention (sorted, so concurrent writers take
        # key locks in one order); the ones already there are looked up (`nodes`).
        # Nodes and links travel as JSON arrays of arrays: one parameter each, cheaper for
        # the driver to send than a text array per column.
        "wanted (kind, ref, label) AS (SELECT item->>0, item->>1, item->>2 "
        "FROM jsonb_array_elements(%(nodes)s::jsonb) AS item), "
        f"added_nodes AS (INSERT INTO {node} (kind, ref, label, recorded_at) "
        "SELECT kind, ref, label, %(at)s FROM wanted WHERE EXISTS (SELECT 1 FROM snap) "
        "ORDER BY kind, ref ON CONFLICT (kind, ref) DO NOTHING RETURNING id, kind, ref), "
        # The ones already there are looked up one by one through the (kind, ref) key: the
        # planner guesses a JSON array holds 100 elements and, joining, would scan the table.
        "nodes AS (SELECT id, kind, ref FROM added_nodes UNION ALL "
        f"SELECT id, kind, ref FROM (SELECT (SELECT id FROM {node} "
        f"WHERE {node}.kind = wanted.kind AND {node}.ref = wanted.ref) AS id, kind, ref "
        "FROM wanted) AS known WHERE id IS NOT NULL), "
        f"edges AS (INSERT INTO {edge} (src_id, dst_id, relation, recorded_at) "
        "SELECT src.id, dst.id, link.relation, %(at)s FROM (SELECT item->>0 AS src_kind, "
        "item->>1 AS src_ref, item->>2 AS dst_kind, item->>3 AS dst_ref, item->>4 AS relation "
        "FROM jsonb_array_elements(%(links)s::jsonb) AS item) AS link "
        "JOIN nodes AS src ON src.kind = link.src_kind AND src.ref = link.src_ref "
        "JOIN nodes AS dst ON dst.kind = link.dst_kind AND dst.ref = link.dst_ref "
        "ON CONFLICT DO NOTHING), "
        "resolved AS (SELECT count(*) AS nodes FROM nodes), "
        # A disagreement still open is joined (last_seen_at moves), another is opened. After
        # the nodes (the condition on `resolved` makes it wait for them): locks are taken in
        # the order of the ORM path (node keys, then contradiction rows), so the two paths
        # cannot deadlock on one subject.
        f"touched AS (UPDATE {contradiction} SET last_seen_at = %(at)s "
        "WHERE status = %(open)s AND signature = ANY(%(signatures)s::varchar[]) "
        "AND EXISTS (SELECT 1 FROM snap) AND (SELECT nodes FROM resolved) >= 0 RETURNING *), "
        f"opened AS ({_insert_from_json(Contradiction, '%(contradictions)s')} "
        "WHERE r.signature NOT IN (SELECT signature FROM touched) RETURNING *), "
        "seen AS ((SELECT DISTINCT ON (signature) * FROM touched ORDER BY signature, id) "
        "UNION ALL (SELECT * FROM opened)), "
        f"seen_links AS (INSERT INTO {seen_in} (contradiction_id, decisionsnapshot_id) "
        "SELECT seen.id, snap.id FROM seen, snap) "
        # A node another transaction committed while this one waited on its key is neither
        # inserted here nor visible to this statement's snapshot: undo, and send again.
        # The columns by name, not `seen.*`: a prepared statement whose result type changed
        # (a column added by a migration while web processes run) fails until reconnected.
        f"SELECT {seen_columns}, snap.id AS snapshot_pk, CASE WHEN (SELECT nodes FROM resolved) "
        "< %(node_count)s THEN reconcile_abort('lineage node raced') ELSE 0 END AS raced "
        "FROM snap LEFT JOIN seen ON TRUE"
    )


def _numbered(statement: str) -> tuple[str, list[str]]:
    """The statement with PostgreSQL's `$n` placeholders, and the parameter names in their
    order (a name used twice is one parameter): psycopg then sends it as it is, where a
    statement this long written with `%(name)s` is parsed again on every reconcile."""
    names: list[str] = []

    def number(match: re.Match[str]) -> str:
        if match.group(1) not in names:
            names.append(match.group(1))
        return f"${names.index(match.group(1)) + 1}"

    return re.sub(r"%\((\w+)\)s", number, statement), names


_STATEMENTS = {guarded: _numbered(_statement(guarded=guarded)) for guarded in (True, False)}


def _json(value: Any) -> str:
    return json.dumps(value, default=_json_default, separators=(",", ":"))


def _snapshot_json(row: dict[str, Any], content_json: str | None) -> str:
    if content_json is None:
        return _json(row)
    rest = _json({column: value for column, value in row.items() if column != "content"})
    return f'{rest[:-1]},"content":{content_json}}}'


def _json_default(value: Any) -> str:
    if isinstance(value, datetime | date):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def snapshot_statement_send(
    rows: SnapshotRows,
    *,
    content_json: str | None = None,
    links: Sequence[Link],
    labels: dict[str, str],
    issued_at: datetime,
    quarantine_epoch: int | None,
    arrived: float | None,
) -> tuple[DecisionSnapshot, list[Contradiction]] | None:
    """Write the snapshot's rows; None (and nothing written) when the quarantine epoch moved
    from `quarantine_epoch`. Returns the snapshot and the contradictions it saw, as stored.
    A snapshot with the same content already stored raises IntegrityError. `content_json`,
    when given, is the content already encoded (its canonical text, when that spells it
    exactly), sent as it is rather than encoded a second time."""
    named = {node: split_node_id(node) for link in links for node in (link.src, link.dst)}
    nodes = sorted(named.items(), key=lambda item: item[1])
    edges = [(*named[link.src], *named[link.dst], link.relation) for link in links]
    timing: list[dict[str, Any]] = []
    params: dict[str, Any] = {
        "epoch": quarantine_epoch,
        "snapshot": _snapshot_json(rows.snapshot, content_json),
        "reads": _json(rows.reads),
        "verdicts": _json(rows.verdicts),
        "receipt": _json([rows.receipt]),
        "contradictions": _json(list(rows.contradictions.values())),
        "signatures": list(rows.contradictions),
        "open": ContradictionStatus.OPEN.value,
        "at": issued_at,
        "nodes": _json([(kind, ref, labels.get(node, "")[:300]) for node, (kind, ref) in nodes]),
        "node_count": len(nodes),
        "links": _json(edges),
    }
    sql, names = _STATEMENTS[quarantine_epoch is not None]
    for _ in range(ATTEMPTS_ON_NODE_RACE):
        if arrived is not None:
            timing = [_timing_row(arrived)]
        params["timing"] = _json(timing)
        try:
            # Inside a caller's transaction the statement gets a savepoint, so a refusal
            # (a raced node, a snapshot already stored) leaves that transaction usable.
            with (
                transaction.atomic() if connection.in_atomic_block else nullcontext(),
                prepared_cursor(dollar_placeholders=True, statement=sql) as cursor,
            ):
                cursor.execute(sql, [params[name] for name in names])
                found = cursor.fetchall()
        except DatabaseError as exc:
            if getattr(exc.__cause__, "sqlstate", None) != ABORT_SQLSTATE:
                raise
            continue
        break
    else:
        # Lineage nodes of this decision kept being created under every attempt.
        raise Conflict(
            "lineage for this decision kept changing while it was written; ask again",
            code="lineage_changed",
        )
    if not found:
        return None
    # As the ORM loads a row (`from_db`, positional): by keyword, Model.__init__ looks every
    # field up in the keywords one by one, about twice the time.
    snapshot = DecisionSnapshot.from_db(
        connection.alias,
        _SNAPSHOT_COLUMNS,
        [
            found[0][_SNAPSHOT_PK] if name == _SNAPSHOT_KEY else rows.snapshot[name]
            for name in _SNAPSHOT_COLUMNS
        ],
    )
    return snapshot, _contradictions(found)


def _contradictions(rows: list[tuple[Any, ...]]) -> list[Contradiction]:
    """The statement's rows as Contradiction instances, as the ORM would load them (JSON
    columns arrive as text on Django's connections and are decoded by their fields)."""
    names = [field.attname for field in _SEEN_FIELDS]
    contradictions = []
    for row in rows:
        if row[_SEEN_ID] is None:
            continue  # the snapshot's own row, when it saw no contradiction
        values = [
            field.from_db_value(value, None, connection)  # type: ignore[arg-type]
            if isinstance(field, models.JSONField) and value is not None
            else value
            for field, value in zip(_SEEN_FIELDS, row, strict=False)
        ]
        contradictions.append(Contradiction.from_db(connection.alias, names, values))
    return contradictions


def _timing_row(arrived: float) -> dict[str, Any]:
    received_at, duration_ms = request_timing(arrived)
    return {"received_at": received_at, "duration_ms": duration_ms}
