"""The snapshot statement's placeholders (services/snapshot_statement.py): written with
`%(name)s`, sent with PostgreSQL's `$n`. psycopg sends a `$n` statement as it is; one written
with `%(name)s` it splits with a regular expression on every call once longer than its 4 KB
cache, as this one is. Text only: no database needed."""

from __future__ import annotations

import re

from reconcile_app.services import snapshot_statement


def test_a_name_used_twice_is_one_parameter():
    numbered, names = snapshot_statement._numbered(
        "INSERT INTO t VALUES (%(at)s, %(value)s) RETURNING %(at)s"
    )
    assert numbered == "INSERT INTO t VALUES ($1, $2) RETURNING $1"
    assert names == ["at", "value"]


def test_both_statements_number_every_parameter_once_and_nothing_else():
    for guarded in (True, False):
        written = snapshot_statement._statement(guarded=guarded)
        numbered, names = snapshot_statement._STATEMENTS[guarded]
        assert len(written) > 4096  # why they are numbered at all
        assert "%" not in numbered
        assert names == list(dict.fromkeys(re.findall(r"%\((\w+)\)s", written)))
        assert set(re.findall(r"\$(\d+)", numbered)) == {str(n) for n in range(1, len(names) + 1)}
    assert "epoch" in snapshot_statement._STATEMENTS[True][1]
    assert "epoch" not in snapshot_statement._STATEMENTS[False][1]
