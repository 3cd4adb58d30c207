"""Change append-only rows behind the application's back, as someone with database access
(a superuser, or whoever restores a backup) could: the checks must notice."""

from __future__ import annotations

import json
from typing import Any

from django.db import connection, transaction


def raw_sql(sql: str, params: list[Any]) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # Step around the append-only triggers, as a database superuser could.
            cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute(sql, params)


def snapshot_content_rewrite(snapshot_id: str, content: dict[str, Any]) -> None:
    """Store other content for a snapshot, leaving its id and `content_hash` as issued."""
    cast = "::jsonb" if connection.vendor == "postgresql" else ""
    raw_sql(
        f"UPDATE reconcile_app_decisionsnapshot SET content = %s{cast}, result = %s "
        "WHERE snapshot_id = %s",
        [json.dumps(content), content["decision"]["result"], snapshot_id],
    )
