"""An owner that acknowledged a write and dropped it cannot have it verified by a later one.

Found in a review of rolling upgrades (stop 58, left alone then): an effect the owner
acknowledged at version 43 and dropped (`postcondition_failed`) became `verified` on an
operator's recheck once the agent's next command wrote the same value: the readback took the
value at version 43 or later for this effect's. The owner accepting another command from a
version before this effect's receipt, after that receipt came back, proves the owner never
held this write: the value now is the other command's. A lagging owner that did apply the
write cannot accept such a command (its If-Match would fail), so it still verifies on recheck.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from django.urls import reverse

from reconcile_app.models import Effect, EvidenceEntry
from reconcile_app.services.effects import effect_readback
from sandbox_app.adapter import SandboxAdapter
from sandbox_app.services import sandbox_fault_add
from tests.conftest import COLLECTIONS, make_agent
from tests.reconcile_app.console.conftest import signed_in
from tests.reconcile_app.effects.conftest import commit, reconcile


def _acknowledged_and_dropped(agent, capture, *, read_back: bool) -> Effect:
    sandbox_fault_add(source="case-service", kind="drop_postcondition", count=1)
    with capture(execute=False):
        response = commit(agent, reconcile(agent), "release_collections_hold", "released", "k-1")
    assert response.status_code == 201, response.content
    effect = Effect.objects.get(idempotency_key="k-1")
    return effect_readback(effect_id=effect.pk) if read_back else effect


def _the_agent_writes_it_again(agent, reviewer, capture) -> Effect:
    """The owner still holds version 42 (the write was dropped). While the first effect
    awaits its readback the decision escalates, and a reviewer lets the agent write again."""
    snapshot = reconcile(agent)
    assert snapshot["fields"]["collections_status"]["version"] == 42
    if snapshot["decision"]["result"] == "escalate":
        decided = reviewer.post(
            f"/api/v1/escalations/{snapshot['escalation_id']}/approve",
            {"rationale": "the owner lost the release; send it again"},
        )
        assert decided.status_code == 200, decided.content
    with capture(execute=False):
        response = commit(agent, snapshot, "release_collections_hold", "released", "k-2")
    assert response.status_code == 201, response.content
    again = Effect.objects.get(idempotency_key="k-2")
    assert (again.status, again.resulting_version) == ("accepted", 43)
    return again


@pytest.mark.parametrize("when", ["an operator's recheck", "a readback queued before it"])
def test_a_later_command_from_the_older_version_keeps_the_drop_failed(
    collectible, agent, reviewer, django_capture_on_commit_callbacks, when
):
    dropped = _acknowledged_and_dropped(
        agent, django_capture_on_commit_callbacks, read_back=when == "an operator's recheck"
    )
    assert dropped.status == (
        "postcondition_failed" if when == "an operator's recheck" else "accepted"
    )
    assert dropped.resulting_version == 43
    again = _the_agent_writes_it_again(agent, reviewer, django_capture_on_commit_callbacks)

    assert effect_readback(effect_id=dropped.pk).status == "postcondition_failed"
    entry = EvidenceEntry.objects.filter(
        kind="readback", note__startswith="readback of k-1"
    ).latest("id")
    assert entry.value["verified"] is False
    assert entry.value["overwritten_by"] == "k-2"
    assert "k-2 from version 42" in entry.note
    assert effect_readback(effect_id=again.pk).status == "verified"


def test_the_effect_page_links_the_command_the_owner_kept_instead(
    collectible, agent, reviewer, operator, django_capture_on_commit_callbacks
):
    dropped = _acknowledged_and_dropped(agent, django_capture_on_commit_callbacks, read_back=True)
    _the_agent_writes_it_again(agent, reviewer, django_capture_on_commit_callbacks)
    effect_readback(effect_id=dropped.pk)

    page = signed_in(operator).get(reverse("console-effect", args=["k-1"]))

    assert page.status_code == 200
    kept = reverse("console-effect", args=["k-2"])
    assert (
        f'the owner kept instead</span> <a class="mono" href="{kept}">k-2</a>'
        in page.content.decode()
    )


def test_proof_from_the_owners_ledger_needs_no_time_from_its_view(
    collectible, agent, reviewer, monkeypatch, django_capture_on_commit_callbacks
):
    """A view that vouches for no time cannot show a write absent by itself (the readback
    waits for one that does); the owner's taking another command from before it can."""
    dropped = _acknowledged_and_dropped(agent, django_capture_on_commit_callbacks, read_back=True)
    _the_agent_writes_it_again(agent, reviewer, django_capture_on_commit_callbacks)
    fresh = SandboxAdapter.read
    monkeypatch.setattr(
        SandboxAdapter,
        "read",
        lambda self, *target: replace(fresh(self, *target), observed_at=None),
    )

    assert effect_readback(effect_id=dropped.pk).status == "postcondition_failed"


def test_another_principals_command_is_not_named_to_this_one(
    collectible, agent, reviewer, django_capture_on_commit_callbacks
):
    """The dropped effect's agent reads its timeline and readback entry; the command the owner
    kept instead is another agent's, and its key is that agent's own (it reads only its
    own effects): the version it was taken from proves the drop without it."""
    dropped = _acknowledged_and_dropped(agent, django_capture_on_commit_callbacks, read_back=True)
    colleague = make_agent("collections-agent-2", [f"{COLLECTIONS}:release_collections_hold"])
    _the_agent_writes_it_again(colleague, reviewer, django_capture_on_commit_callbacks)

    assert effect_readback(effect_id=dropped.pk).status == "postcondition_failed"
    entry = EvidenceEntry.objects.filter(kind="readback", note__startswith="readback of k-1")
    value = entry.latest("id").value
    assert (value["overwritten_from_version"], "overwritten_by" in value) == (42, False)
    assert "k-2" not in entry.latest("id").note
    timeline = agent.get("/api/v1/effects/k-1").json()["timeline"]
    assert "k-2" not in str(timeline)
    assert timeline[-1]["detail"]["overwritten_from_version"] == 42


def test_the_later_commands_own_readback_is_untouched(
    collectible, agent, reviewer, django_capture_on_commit_callbacks
):
    """The rule looks at commands accepted after this effect's receipt, never before: the
    second command's readback verifies even though the first was accepted from 42 too."""
    _acknowledged_and_dropped(agent, django_capture_on_commit_callbacks, read_back=True)
    again = _the_agent_writes_it_again(agent, reviewer, django_capture_on_commit_callbacks)

    effect = effect_readback(effect_id=again.pk)

    assert effect.status == "verified"
    entry = EvidenceEntry.objects.filter(
        kind="readback", note__startswith="readback of k-2"
    ).latest("id")
    assert "overwritten_by" not in entry.value
