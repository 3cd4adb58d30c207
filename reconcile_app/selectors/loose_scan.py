"""The distinct values of an indexed column, read from its index one value at a time.

Neither PostgreSQL (before 18) nor SQLite skips through an index for SELECT DISTINCT: on a
table that grows with use (claim verdicts, memories, the audit trail) it reads every row,
on every page that offers the values as suggestions. A recursive walk asks the index for
the least value past the previous one (`SELECT MIN(c) … WHERE c > previous`, "a loose index
scan"), so the cost follows the number of distinct values, not of rows.
"""

from __future__ import annotations


def distinct_walk(name: str, table: str, column: str) -> str:
    """A CTE term `name(value)` walking the distinct non-empty values of `table.column` in
    order (a trailing NULL row ends it: select `WHERE value IS NOT NULL`). For a
    `WITH RECURSIVE` clause; table and column names are the models' own, never input."""
    return (
        f"{name}(value) AS ("  # noqa: S608  # nosec B608
        f" SELECT MIN({column}) FROM {table} WHERE {column} <> ''"
        f" UNION ALL"
        f" SELECT (SELECT MIN(t.{column}) FROM {table} t"
        f" WHERE t.{column} <> '' AND t.{column} > {name}.value)"
        f" FROM {name} WHERE {name}.value IS NOT NULL)"
    )
