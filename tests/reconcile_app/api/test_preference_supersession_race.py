"""Two preferences for one subject and field written at once, on PostgreSQL: the newer one
supersedes the older (docs/api.md "Memory classes": "a newer preference of the class for
the same subject and field, by the same agent, supersedes it"), so one stays in force.

The write looked for the preference in force with SELECT ... FOR UPDATE and nothing else:
a second write waiting on that row found it superseded when the first committed, and since
its statement could not see the first write's new record, it superseded nothing: two
preferences stayed in force for the same subject and field, one of them retiring nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection

from reconcile_app.choices import MEMORY_IN_FORCE
from reconcile_app.models import MemoryRecord
from reconcile_app.services import memory as memory_module
from reconcile_app.services.evidence import evidence_append
from reconcile_app.services.memory import memory_admit
from tests.conftest import ago
from tests.factories import ACCOUNT
from tests.races import paused_race

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks: PostgreSQL"),
    pytest.mark.django_db(transaction=True),
]


def _preference(agent: Any, memory_id: str, value: str) -> Callable[[], Any]:
    def write() -> Any:
        return memory_admit(
            agent=agent.principal,
            memory_class="customer-preferences",
            subject=ACCOUNT,
            purpose="collections",
            field="contact_channel",
            value=value,
            derived_from=["ev-consent"],
            memory_id=memory_id,
        ).memory_id

    return write


def test_two_preferences_written_at_once_leave_one_in_force(estate, agent, monkeypatch):
    evidence_append(
        kind="consent",
        subject=ACCOUNT,
        field="contact_channel",
        value="agreed to be contacted by the channel they choose",
        source="case-ledger",
        observed_at=ago(minutes=5),
        evidence_id="ev-consent",
    )
    _preference(agent, "pref-email", "email")()
    seen = paused_race(
        monkeypatch,
        memory_module,
        "_preference_in_force",
        _preference(agent, "pref-sms", "sms"),
        _preference(agent, "pref-post", "post"),
    )
    assert (seen["write"], seen["change"]) == ("pref-sms", "pref-post"), seen
    records = {
        record.memory_id: (record.status, record.supersedes_id and record.supersedes.memory_id)
        for record in MemoryRecord.objects.select_related("supersedes")
    }
    assert records == {
        "pref-email": ("superseded", None),
        "pref-sms": ("superseded", "pref-email"),
        "pref-post": ("current", "pref-sms"),
    }, records
    assert MemoryRecord.objects.filter(status__in=MEMORY_IN_FORCE).count() == 1
