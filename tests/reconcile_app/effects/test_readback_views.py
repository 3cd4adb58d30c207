"""A readback judges the postcondition absent only from a view it knows is from after the
commit: a view older than it, or one that vouches for no time, may not have seen it yet."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from reconcile_app.models import Effect, EvidenceEntry
from reconcile_app.services.effects import OwnerUnavailable, effect_readback
from sandbox_app.adapter import SandboxAdapter
from sandbox_app.services import sandbox_record_write
from tests.reconcile_app.effects.conftest import SUBJECT, commit, reconcile


@pytest.fixture
def accepted(collectible, agent):
    snapshot = reconcile(agent)
    response = commit(agent, snapshot, "release_collections_hold", "released", "k-rb")
    assert response.status_code == 201, response.content
    effect = Effect.objects.get(idempotency_key="k-rb")
    assert effect.status == "accepted"
    return effect


def owner_answering(monkeypatch, **changes) -> None:
    fresh = SandboxAdapter.read

    def behind(self, subject, field):
        return replace(fresh(self, subject, field), value="collect", version=42, **changes)

    monkeypatch.setattr(SandboxAdapter, "read", behind)


@pytest.mark.parametrize("vouched", ["no time", "before the commit"])
def test_a_view_that_may_predate_the_commit_does_not_fail_the_postcondition(
    accepted, monkeypatch, vouched
):
    observed_at = None if vouched == "no time" else accepted.outcome_at - timedelta(seconds=5)
    owner_answering(monkeypatch, observed_at=observed_at)

    with pytest.raises(OwnerUnavailable):
        effect_readback(effect_id=accepted.pk)

    accepted.refresh_from_db()
    assert accepted.status == "accepted"  # was postcondition_failed with no time vouched
    monkeypatch.undo()
    assert effect_readback(effect_id=accepted.pk).status == "verified"


def _owner_holding_the_write(monkeypatch, accepted, **changes) -> None:
    fresh = SandboxAdapter.read

    def holding(self, subject, field):
        read = fresh(self, subject, field)
        assert (read.value, read.version) == ("released", accepted.resulting_version)
        return replace(read, **changes)

    monkeypatch.setattr(SandboxAdapter, "read", holding)


def test_a_view_holding_the_written_version_proves_it_at_any_age(accepted, monkeypatch):
    """A view that vouches for no time cannot show the postcondition absent, but one holding
    the written value at the written version shows it present."""
    _owner_holding_the_write(monkeypatch, accepted, observed_at=None)

    assert effect_readback(effect_id=accepted.pk).status == "verified"


def test_a_readback_that_finds_the_write_names_no_other_read(accepted, agent):
    """`written_version_read_in` is for a target overwritten since; when the readback finds
    the write itself it is the proof, even after a later decision read that version."""
    later = reconcile(agent)
    assert later["fields"]["collections_status"]["version"] == accepted.resulting_version
    # And the owner wrote the same value again since: found at a later version, still proof.
    sandbox_record_write(
        source="case-service", subject=SUBJECT, field="collections_status", value="released"
    )

    assert effect_readback(effect_id=accepted.pk).status == "verified"
    entry = EvidenceEntry.objects.filter(kind="readback").latest("id")
    assert "written_version_read_in" not in entry.value
    assert "overwritten since" not in entry.note
