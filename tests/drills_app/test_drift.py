"""Seed 002's drift benchmark: the mechanism, its checks, and the command that stores a run."""

from __future__ import annotations

import io
import json
from random import Random

import pytest
from django.core.management import CommandError, call_command

from drills_app.choices import DrillRunKind, DrillRunStatus
from drills_app.drift import (
    INITIAL,
    DriftParameters,
    Event,
    Narrative,
    drift_benchmark_run,
    episode_checkpoints,
    paired_history,
    reconstruct,
)
from drills_app.models import DrillRun

SMALL = DriftParameters(episodes=150, seed=11)


@pytest.fixture(scope="module")
def small_run() -> dict:
    return drift_benchmark_run(SMALL)


def test_reference_reducer_is_idempotent_and_ordered():
    events = [
        Event(2, "hold", "off", "e2"),
        Event(1, "hold", "on", "e1"),
        Event(1, "hold", "on", "e1"),
    ]
    assert reconstruct(events) == INITIAL
    assert reconstruct([Event(1, "plan", "paused", "p1")])["plan"] == "paused"


def test_narrative_keeps_recent_updates_visible_until_compaction_omits_them():
    narrative = Narrative(Random(0), omission_rate=1.0)
    narrative.observe(Event(1, "hold", "on", "a1"))
    assert narrative.view()["hold"] == "on"  # not yet compacted: still visible
    narrative.compact()
    assert narrative.view()["hold"] == "off"  # omitted at compaction: the old summary stays


def test_stale_rate_never_falls_as_the_horizon_grows(small_run):
    rates = [row["stale_checkpoint_rate"] for row in small_run["horizons"]]
    assert rates == sorted(rates)
    assert rates[-1] > rates[0] > 0
    assert small_run["checks"]["stale_rate_monotonic"]


def test_reconstruction_is_exact_at_every_horizon_despite_duplicates_and_reordering(small_run):
    assert {row["reconstruction_exact_rate"] for row in small_run["horizons"]} == {1.0}
    assert small_run["checks"]["reconstruction_exact"]


def test_narrative_drifts_where_reconstruction_does_not(small_run):
    last = small_run["horizons"][-1]
    assert last["final_narrative_accuracy"] < 0.8
    assert last["average_checkpoint_accuracy"] < 1.0


def test_negative_control_without_mutation_is_perfect_even_when_half_is_omitted(small_run):
    control = small_run["negative_control"]
    assert control["mutation_rate"] == 0.0 and control["omission_rate"] == 0.5
    assert control["narrative_accuracy"] == 1.0
    assert control["average_checkpoint_accuracy"] == 1.0
    assert control["reconstruction_exact_rate"] == 1.0
    assert control["stale_checkpoint_rate"] == 0.0


def test_paired_histories_violate_invariance_only_in_the_narrative():
    paired = paired_history(seed=5, trials=4000, omission_rate=0.18)
    assert paired["reconstruction_violation_rate"] == 0.0
    # The "on" update kept, the "off" update omitted: 0.82 x 0.18 = 14.76%.
    assert paired["narrative_violation_rate"] == pytest.approx(0.1476, abs=0.02)


def test_no_omission_means_no_drift():
    run = drift_benchmark_run(DriftParameters(episodes=60, omission_rate=0.0, max_horizon=4))
    assert {row["stale_checkpoint_rate"] for row in run["horizons"]} == {0.0}
    assert run["paired_history"]["narrative_violation_rate"] == 0.0


def test_same_seed_same_figures_and_horizons_share_episode_prefixes():
    first = drift_benchmark_run(DriftParameters(episodes=40, max_horizon=5))
    second = drift_benchmark_run(DriftParameters(episodes=40, max_horizon=5))
    assert first["horizons"] == second["horizons"]
    long = episode_checkpoints(
        seed=1, index=3, compactions=8, interval=10, mutation_rate=0.22, omission_rate=0.18
    )
    short = episode_checkpoints(
        seed=1, index=3, compactions=4, interval=10, mutation_rate=0.22, omission_rate=0.18
    )
    assert long[:4] == short


@pytest.mark.parametrize(
    "bad", [{"episodes": 0}, {"min_horizon": 5, "max_horizon": 4}, {"mutation_rate": 1.5}]
)
def test_parameters_out_of_range_are_refused(bad):
    with pytest.raises(ValueError):
        DriftParameters(**bad).check()


def test_command_prints_the_table_and_stores_the_run(db):
    out = io.StringIO()
    call_command(
        "drift_benchmark", "--episodes", "80", "--max-horizon", "4", "--seed", "3", stdout=out
    )
    text = out.getvalue()
    assert "stale checkpoints" in text and "reconstruction" in text
    assert "paired histories" in text and "negative control" in text
    assert "checks: all hold" in text
    run = DrillRun.objects.get()
    assert run.kind == DrillRunKind.DRIFT_BENCHMARK
    assert run.status == DrillRunStatus.COMPLETE and run.finished_at is not None
    assert run.passed is None
    assert run.parameters["episodes"] == 80 and run.parameters["max_horizon"] == 4
    assert [row["horizon"] for row in run.results["horizons"]] == [2, 3, 4]
    assert run.progress["stage"] == "done"
    json.dumps(run.results)  # plain JSON, ready to chart


def test_command_json_output_is_the_stored_results(db):
    out = io.StringIO()
    call_command("drift_benchmark", "--episodes", "30", "--max-horizon", "3", "--json", stdout=out)
    assert json.loads(out.getvalue()) == DrillRun.objects.get().results


def test_command_refuses_bad_options_without_storing_a_run(db):
    with pytest.raises(CommandError):
        call_command("drift_benchmark", "--omission-rate", "2", stdout=io.StringIO())
    assert not DrillRun.objects.exists()
