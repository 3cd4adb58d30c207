"""The drill's poisoned-memory scenario: a recalled record feeds decisions and effects, is
quarantined, its blast radius lists what it fed, and no later decision cites it."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.core.management import call_command

from drills_app import poisoned
from drills_app.choices import DrillRunKind
from drills_app.runs import drill_run_execute, drill_run_start
from drills_app.scenarios import DrillParameters, drill_suite_run
from reconcile_app.models import AuditEvent, ClaimVerdict, Effect, Quarantine
from reconcile_app.selectors.lineage import memory_citations, memory_fed
from reconcile_app.services import reconcile as protocol
from reconcile_app.services.quarantine import ActiveQuarantines
from tests.reconcile_app.console.conftest import signed_in

ONLY_POISONED = DrillParameters(repeat=1, scenarios=(poisoned.NAME,))


@pytest.fixture
def report(db) -> dict[str, Any]:
    return drill_suite_run(ONLY_POISONED)


def trial(report: dict[str, Any]) -> dict[str, Any]:
    return report["poisoned_memory"]["trials_detail"][0]


def test_the_blast_radius_lists_every_snapshot_decision_and_effect_it_fed(report):
    section = report["poisoned_memory"]
    assert report["passed"] and section["passed"] and section["failures"] == []
    assert section["blast_radius_complete"]
    assert (section["snapshots_fed"], section["effects_fed"]) == (3, 2)
    detail = trial(report)
    fed = memory_fed(memory_id=detail["memory_id"])
    assert set(detail["fed_snapshots"]) <= set(fed["snapshot"])
    assert set(detail["fed_decisions"]) <= set(fed["decision"])
    assert set(detail["fed_effects"]) <= set(fed["effect"])
    assert Effect.objects.filter(idempotency_key__in=detail["fed_effects"]).count() == 2


def test_no_later_decision_cites_it(report):
    detail = trial(report)
    assert detail["later_verdicts"] == ["quarantined", "quarantined"]
    assert report["poisoned_memory"]["later_citations"] == 0
    assert sorted(memory_citations(memory_id=detail["memory_id"])) == sorted(
        detail["fed_snapshots"]
    )
    later = ClaimVerdict.objects.filter(snapshot__snapshot_id__in=detail["later_snapshots"])
    assert {(row.memory_id, row.verdict) for row in later} == {(detail["memory_id"], "quarantined")}
    # Nothing else changed: the later decisions still allowed, and one committed.
    assert len(detail["later_effects"]) == 1
    assert "recall → allow, claim quarantined" in detail["steps"]


def test_later_decisions_downstream_through_its_effects_are_counted_not_cited(report):
    """The effects it fed left receipts the later reads rest on: reviewable, not a citation."""
    detail = trial(report)
    assert detail["later_downstream"] == detail["later_snapshots"]
    assert report["poisoned_memory"]["later_downstream"] == 2


def test_every_snapshot_replays_exactly_and_the_quarantine_is_lifted(report):
    section = report["poisoned_memory"]
    assert section["replays"] == section["replays_exact"] == 5
    quarantine = Quarantine.objects.get(scope="memory", target=trial(report)["memory_id"])
    assert quarantine.status == "lifted"
    assert quarantine.affected["claims"] == 3
    assert list(
        AuditEvent.objects.filter(object_ref=quarantine.quarantine_id)
        .order_by("at")
        .values_list("action", "actor_name")
    ) == [("quarantine.create", "system"), ("quarantine.lift", "system")]


def test_the_drill_fails_when_a_quarantined_memory_is_still_cited(db, monkeypatch):
    original = protocol.quarantines_active

    def memory_quarantines_ignored() -> ActiveQuarantines:
        active = original()
        return ActiveQuarantines(
            sources=active.sources, memory_classes=active.memory_classes, epoch=active.epoch
        )

    monkeypatch.setattr(protocol, "quarantines_active", memory_quarantines_ignored)
    report = drill_suite_run(ONLY_POISONED)
    assert report["passed"] is False
    section = report["poisoned_memory"]
    assert section["later_citations"] == 4  # two verdicts, two lineage edges
    assert any("later snapshots used it" in failure for failure in report["failures"])
    assert any("a later claim citing it was" in failure for failure in report["failures"])


def test_the_command_lists_it_and_prints_its_figures(db):
    out = io.StringIO()
    call_command("drill", "--repeat", "1", "--scenario", poisoned.NAME, stdout=out)
    text = out.getvalue()
    assert f"{poisoned.NAME}: {poisoned.TITLE} (1 trials)" in text
    assert "blast radius: 3 snapshots and 2 effects fed before the quarantine, all listed" in text
    assert "after it: 2 decisions, 0 citing it (2 downstream only through effects it fed)" in text
    assert "exact replay: 5/5" in text
    assert "protocol: PASSED" in text


def test_the_run_page_shows_it(db, operator):
    run = drill_run_start(kind=DrillRunKind.DRILL, parameters=ONLY_POISONED.as_dict())
    run = drill_run_execute(run_id=run.pk)
    memory_id = run.results["poisoned_memory"]["trials_detail"][0]["memory_id"]
    page = signed_in(operator).get(f"/drills/{run.pk}/").content.decode()
    assert f'id="run-{run.pk}-poisoned"' in page
    assert "3 snapshots · 2 effects" in page
    assert "all in its blast radius" in page and "none cited it" in page
    assert f'href="/lineage/blast-radius/?node=memory:{memory_id}"' in page
    drills = signed_in(operator).get("/drills/").content.decode()
    assert "then a poisoned memory" in drills


def test_a_trial_that_fails_after_the_quarantine_still_lifts_it(db, monkeypatch):
    """Pass or fail, a drill leaves no record held: the trial's quarantine is its own."""

    def replay_down(trial: poisoned.PoisonedTrial, snapshot_ids: list[str]) -> None:
        raise RuntimeError("replay service down")

    monkeypatch.setattr(poisoned, "_replay", replay_down)
    with pytest.raises(RuntimeError):
        drill_suite_run(ONLY_POISONED)

    quarantine = Quarantine.objects.get(scope="memory")
    assert quarantine.status == "lifted"
    assert "did not finish" in quarantine.lift_reason
    assert not Quarantine.objects.filter(status__in=["applying", "applied"]).exists()
