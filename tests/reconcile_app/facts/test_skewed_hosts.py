"""Two web hosts whose clocks disagree by a moment write one fact key's history.

Every stamp is its host's `timezone.now()`. A record written on a host running ahead can be
superseded a moment later from a host running behind: the supersession's status event is
then stamped *before* the record it retires was recorded. History (`as_of`) must still say
what the present says once both are known: the newer record current, the older superseded.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from reconcile_app.canonical import rfc3339
from reconcile_app.models import MemoryRecord
from tests.reconcile_app.console.conftest import signed_in
from tests.reconcile_app.facts.conftest import authority, remember

KEY = "baseline.math-eval"
SKEW = timedelta(seconds=2)


@pytest.fixture
def host_clock(monkeypatch):
    """Sets the product's clock `delta` from the real one (the host the next request hits)."""
    real_now = timezone.now

    def running(delta: timedelta) -> None:
        monkeypatch.setattr(timezone, "now", lambda: real_now() + delta)

    return running


def test_a_supersession_from_a_host_behind_is_history_once_both_are_known(
    registry, agent, host_clock
):
    authority(KEY, revision="registry@r18")
    host_clock(+SKEW)  # host A runs ahead
    remember(agent, KEY, "baseline-v17", "ckpt-0412", "registry@r18")
    host_clock(-SKEW)  # host B runs behind; the next write supersedes v17
    remember(agent, KEY, "baseline-v18", "ckpt-0519", "registry@r18", supersedes="baseline-v17")
    host_clock(SKEW * 2)  # later, past every stamp above

    live = agent.client.get(f"/api/v1/facts/{KEY}/current", {"on": "2026-09-30"})
    assert (live.status_code, live.json()["fact"]["memory_id"]) == (200, "baseline-v18")
    latest = max(record.recorded_at for record in MemoryRecord.objects.all())
    for as_of in (latest, timezone.now() - timedelta(seconds=1)):
        then = agent.client.get(
            f"/api/v1/facts/{KEY}/current", {"on": "2026-09-30", "as_of": rfc3339(as_of)}
        )
        body = then.json()
        assert then.status_code == 200, body
        assert body["fact"]["memory_id"] == "baseline-v18"


def test_the_memory_page_lists_its_moves_in_the_order_they_happened(
    registry, agent, operator, host_clock
):
    authority(KEY, revision="registry@r18")
    host_clock(+SKEW)
    remember(agent, KEY, "baseline-v17", "ckpt-0412", "registry@r18")
    host_clock(-SKEW)
    remember(agent, KEY, "baseline-v18", "ckpt-0519", "registry@r18", supersedes="baseline-v17")

    page = signed_in(operator).get("/memories/baseline-v17/").content.decode()
    history = page[page.index('id="status-history"') :]
    assert history.index("superseded by baseline-v18") > history.index("admitted")


def test_the_sandbox_owners_history_ends_at_its_present_answer(registry, agent, host_clock):
    # The sandbox owner runs in the web processes: its authority history is stamped by the
    # host each write reached.
    host_clock(+SKEW)
    authority(KEY, revision="registry@r17")
    host_clock(-SKEW)
    authority(KEY, revision="registry@r18")
    host_clock(SKEW * 2)

    asked = {"on": "2026-09-30", "as_of": rfc3339(timezone.now() - timedelta(seconds=1))}
    then = agent.client.get(f"/api/v1/facts/{KEY}/current", asked).json()
    now = agent.client.get(f"/api/v1/facts/{KEY}/current", {"on": "2026-09-30"}).json()
    assert now["authority"]["source_revision"] == "registry@r18"
    assert then["authority"]["source_revision"] == "registry@r18"
