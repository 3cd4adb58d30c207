"""A readback of a target overwritten since the write looks for a read of the written version.

Live (a day-2 review): readbacks delayed ~80 s by a stopped worker pool found the agents' own
next commits on those accounts, and marked three applied effects `postcondition_failed`: the
readback compared the value now, another command's. A snapshot that read the version this
effect wrote shows what the write left; without one, the failure stands.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from reconcile_app.models import Effect, EvidenceEntry
from reconcile_app.services.effects import effect_readback
from reconcile_app.sources import ApplyOutcome, ApplyResult
from sandbox_app.adapter import SandboxAdapter
from sandbox_app.services import sandbox_record_write
from tests.reconcile_app.effects.conftest import SUBJECT, commit, reconcile
from tests.reconcile_app.effects.test_readback_views import accepted  # noqa: F401


def overwritten() -> None:
    sandbox_record_write(
        source="case-service", subject=SUBJECT, field="collections_status", value="collect"
    )


def test_a_later_decisions_read_of_the_written_version_verifies_it(accepted, agent):
    later = reconcile(agent)  # the agent's next decision reads the target as the write left it
    read = later["fields"]["collections_status"]
    assert (read["value"], read["version"]) == ("released", accepted.resulting_version)
    overwritten()

    effect = effect_readback(effect_id=accepted.pk)

    assert effect.status == "verified"
    entry = EvidenceEntry.objects.filter(kind="readback").latest("id")
    assert entry.value["written_version_read_in"] == later["snapshot_id"]
    assert entry.value["version"] > accepted.resulting_version
    assert f"snapshot {later['snapshot_id']} read 'released'" in entry.note


def test_overwritten_with_no_read_of_the_written_version_fails(accepted):
    overwritten()

    effect = effect_readback(effect_id=accepted.pk)

    assert effect.status == "postcondition_failed"
    assert (
        "written_version_read_in"
        not in EvidenceEntry.objects.filter(kind="readback").latest("id").value
    )


@pytest.mark.parametrize("recorded", ["another value", "a disagreeing second read"])
def test_a_read_of_the_written_version_that_disagrees_proves_nothing(
    accepted, agent, monkeypatch, recorded
):
    if recorded == "a disagreeing second read":
        reconcile(agent)
    truthful = SandboxAdapter.read_batch.__func__

    def confused(cls, reads):
        return [
            replace(answer, value="hold") if field == "collections_status" else answer
            for answer, (_, _, field) in zip(truthful(cls, reads), reads, strict=True)
        ]

    monkeypatch.setattr(SandboxAdapter, "read_batch", classmethod(confused))
    reconcile(agent)  # an owner answering another value at the version the write produced
    monkeypatch.undo()
    overwritten()

    assert effect_readback(effect_id=accepted.pk).status == "postcondition_failed"


def test_a_read_from_before_the_effect_was_sent_proves_nothing(
    collectible, agent, operator, monkeypatch
):
    """A person said "it happened" (the least version it could have made: expected + 1); the
    only read of that version Reconcile holds was made before the command left, of another
    writer's state (the owner would have refused this If-Match). It cannot show what the
    command left: the readback of the target, overwritten since, fails as before."""
    stale = reconcile(agent)  # reads version 42
    sandbox_record_write(
        source="case-service", subject=SUBJECT, field="collections_status", value="released"
    )
    assert reconcile(agent)["fields"]["collections_status"]["version"] == 43  # another's write
    monkeypatch.setattr(
        SandboxAdapter,
        "apply",
        lambda self, command: ApplyResult(ApplyOutcome.UNKNOWN, code="timeout"),
    )
    assert commit(agent, stale, "release_collections_hold", "released", "k-gone").status_code == 202
    monkeypatch.undo()
    said = operator.post(
        "/api/v1/effects/k-gone/resolve", {"outcome": "succeeded", "reason": "the agent says so"}
    )
    assert said.status_code == 200, said.content
    effect = Effect.objects.get(idempotency_key="k-gone")
    assert (effect.status, effect.resulting_version) == ("accepted", 43)
    overwritten()

    assert effect_readback(effect_id=effect.pk).status == "postcondition_failed"


def test_the_written_value_at_a_later_version_verifies_without_any_read(accepted):
    """docs/api.md: the readback finds `resulting_value` at `resulting_version` *or later*.
    A later write of the same value leaves the postcondition standing: no snapshot need have
    read the written version to prove it."""
    sandbox_record_write(
        source="case-service", subject=SUBJECT, field="collections_status", value="released"
    )

    effect = effect_readback(effect_id=accepted.pk)

    assert effect.status == "verified"
    entry = EvidenceEntry.objects.filter(kind="readback").latest("id")
    assert entry.value["version"] == accepted.resulting_version + 1
    assert "written_version_read_in" not in entry.value


def test_the_written_value_at_an_earlier_version_proves_nothing(accepted, monkeypatch):
    """The same value under a version before the one written is another state of the record
    (a view that missed the command), not the postcondition."""
    fresh = SandboxAdapter.read

    def earlier(self, subject, field):
        read = fresh(self, subject, field)
        return replace(read, value="released", version=accepted.resulting_version - 1)

    monkeypatch.setattr(SandboxAdapter, "read", earlier)

    assert effect_readback(effect_id=accepted.pk).status == "postcondition_failed"


def test_of_several_agreeing_reads_of_the_written_version_the_first_is_named(accepted, agent):
    """docs/api.md: the readback entry names the first of the reads that found the write."""
    first = reconcile(agent)
    second = reconcile(agent)
    assert first["snapshot_id"] != second["snapshot_id"]
    overwritten()

    assert effect_readback(effect_id=accepted.pk).status == "verified"
    entry = EvidenceEntry.objects.filter(kind="readback").latest("id")
    assert entry.value["written_version_read_in"] == first["snapshot_id"]
