"""The effects API names each effect's snapshot by id: the snapshot's content (every read,
claim and piece of evidence, kilobytes each) was read and decoded for every row listed and
never shown."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.reconcile_app.console.conftest import commit_effect

SNAPSHOT_CONTENT = '"reconcile_app_decisionsnapshot"."content"'


def test_effects_listed_and_read_one_by_one_read_no_snapshot_content(estate, agent, operator):
    effects = [commit_effect(agent, f"lc-{n}") for n in range(3)]
    for persona in (operator, agent):
        with CaptureQueriesContext(connection) as queries:
            listed = persona.get("/api/v1/effects")
            one = persona.get(f"/api/v1/effects/{effects[0].idempotency_key}")
        assert listed.status_code == one.status_code == 200
        assert len(listed.json()["results"]) == 3
        assert one.json()["snapshot_id"] == effects[0].snapshot.snapshot_id
        read = [q["sql"] for q in queries if 'FROM "reconcile_app_effect"' in q["sql"]]
        assert read and not any(SNAPSHOT_CONTENT in sql for sql in read)
