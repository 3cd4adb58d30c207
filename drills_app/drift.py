"""Seed 002's benchmark that can fail: a carried narrative against reconstruction by reducer.

No language model and no database: mutable fields change at random, every change goes to an
authoritative event list *and* to a narrative that compacts its recent events every
`interval` steps, omitting each update with probability `omission_rate` (the old summary
value then stays). Reconstruction folds the event list with duplicate suppression. Any
divergence therefore comes from irreversible carry-forward, not from retrieval or reasoning.

`INITIAL`, `VALUES`, `Event`, `reconstruct` and `Narrative` are the seed's reference code.
The episode loop is the seed's description: each step mutates one field, with probability
`mutation_rate`, to a value other than its current one (an event is a change); after each
compaction the narrative's view is a checkpoint, compared with the true state.

Episode *i* draws from its own seeded stream (`Random(f"{seed}:{i}")`) whatever the horizon,
so the episode at horizon *h* is the first *h* compactions of the same episode at any longer
horizon (common random numbers): horizons differ only in length, and a stale checkpoint
once seen stays counted, so the stale rate cannot fall as the horizon grows.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from itertools import pairwise
from random import Random
from typing import Any

INITIAL = {"hold": "off", "address": "A", "plan": "standard"}
VALUES = {
    "hold": ("off", "on"),
    "address": ("A", "B", "C", "D"),
    "plan": ("standard", "reduced", "paused"),
}
FIELDS = tuple(VALUES)

# The seed's measured figures (2,000 episodes, interval 10, mutation 22%, omission 18%).
SEED_REFERENCE: dict[str, Any] = {
    "stale_checkpoint_rate": {"2": 0.453, "12": 0.985},
    "final_narrative_accuracy": "near half",
    "paired_history_violation_rate": 0.148,
    "negative_control": {"narrative_accuracy": 1.0, "reconstruction_exact_rate": 1.0},
}


@dataclass(frozen=True)
class Event:
    seq: int
    field: str
    value: str
    event_id: str


def reconstruct(events: Iterable[Event]) -> dict[str, str]:
    state, seen = dict(INITIAL), set()
    for event in sorted(events, key=lambda e: e.seq):
        if event.event_id in seen:
            continue  # idempotent replay
        state[event.field] = event.value
        seen.add(event.event_id)
    return state


class Narrative:
    def __init__(self, rng: Random, omission_rate: float) -> None:
        self.rng = rng
        self.omission_rate = omission_rate
        self.summary = dict(INITIAL)
        self.recent: list[Event] = []

    def observe(self, event: Event) -> None:
        self.recent.append(event)

    def compact(self) -> None:
        for event in self.recent:
            if self.rng.random() >= self.omission_rate:
                self.summary[event.field] = event.value
        self.recent.clear()

    def view(self) -> dict[str, str]:
        state = dict(self.summary)
        for event in self.recent:  # recent, uncompacted facts remain visible
            state[event.field] = event.value
        return state


@dataclass(frozen=True)
class DriftParameters:
    episodes: int = 2000
    min_horizon: int = 2
    max_horizon: int = 12
    interval: int = 10
    mutation_rate: float = 0.22
    omission_rate: float = 0.18
    seed: int = 2026
    # The negative control keeps omission high on purpose: with nothing mutating, even a
    # forgetful narrative cannot go stale.
    control_omission_rate: float = 0.5

    def check(self) -> None:
        if self.episodes < 1:
            raise ValueError("episodes must be at least 1")
        if not 1 <= self.min_horizon <= self.max_horizon:
            raise ValueError("horizons must satisfy 1 <= min_horizon <= max_horizon")
        if self.interval < 1:
            raise ValueError("interval must be at least 1")
        for name in ("mutation_rate", "omission_rate", "control_omission_rate"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be between 0 and 1")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Checkpoint:
    narrative_ok: bool  # the narrative's view equals the true state
    reconstruction_ok: bool  # the reducer over the delivered log equals the true state


def episode_checkpoints(
    *,
    seed: int,
    index: int,
    compactions: int,
    interval: int,
    mutation_rate: float,
    omission_rate: float,
) -> list[Checkpoint]:
    """One episode: a checkpoint after each compaction."""
    rng = Random(f"{seed}:{index}")  # noqa: S311 (a seeded simulation, not a secret)
    # Duplicates and shuffling of the delivered log use their own stream, so the replay check
    # never changes what the narrative sees.
    delivery = Random(f"{seed}:{index}:delivery")  # noqa: S311
    narrative = Narrative(rng, omission_rate)
    truth = dict(INITIAL)
    events: list[Event] = []
    checkpoints: list[Checkpoint] = []
    for step in range(1, compactions * interval + 1):
        if rng.random() < mutation_rate:
            field = rng.choice(FIELDS)
            value = rng.choice([v for v in VALUES[field] if v != truth[field]])
            event = Event(len(events) + 1, field, value, f"e{index}-{len(events) + 1}")
            events.append(event)
            truth[field] = value
            narrative.observe(event)
        if step % interval == 0:
            narrative.compact()
            delivered = events + [e for e in events if delivery.random() < 0.25]
            delivery.shuffle(delivered)  # duplicated and out of order, as brokers deliver
            checkpoints.append(
                Checkpoint(
                    narrative_ok=narrative.view() == truth,
                    reconstruction_ok=reconstruct(delivered) == truth,
                )
            )
    return checkpoints


def horizon_figures(
    traces: list[list[Checkpoint]], horizon: int, interval: int
) -> dict[str, float | int]:
    """Figures at `horizon` compactions from the first `horizon` checkpoints of each episode."""
    episodes = len(traces)
    stale = final = recon = 0
    checkpoint_accuracy = 0.0
    for trace in traces:
        seen = trace[:horizon]
        stale += not all(item.narrative_ok for item in seen)
        final += seen[-1].narrative_ok
        checkpoint_accuracy += sum(item.narrative_ok for item in seen) / horizon
        recon += all(item.reconstruction_ok for item in seen)
    return {
        "horizon": horizon,
        "steps": horizon * interval,
        "episodes": episodes,
        "stale_checkpoint_rate": stale / episodes,
        "final_narrative_accuracy": final / episodes,
        "average_checkpoint_accuracy": checkpoint_accuracy / episodes,
        "reconstruction_exact_rate": recon / episodes,
    }


def permitted_actions(state: dict[str, str]) -> frozenset[str]:
    """The decision the paired histories are judged on: a letter only while no hold."""
    if state["hold"] == "off":
        return frozenset({"send_collections_letter"})
    return frozenset({"retain_manual_review"})


def paired_history(*, seed: int, trials: int, omission_rate: float) -> dict[str, Any]:
    """History-substitution invariance: A (hold on, then off) and B (nothing) end equal."""
    rng = Random(f"{seed}:paired")  # noqa: S311
    history_a = [Event(1, "hold", "on", "a1"), Event(2, "hold", "off", "a2")]
    history_b: list[Event] = []
    assert reconstruct(history_a) == reconstruct(history_b) == INITIAL
    narrative_violations = reconstruction_violations = 0
    for _ in range(trials):
        carried_a, carried_b = Narrative(rng, omission_rate), Narrative(rng, omission_rate)
        for event in history_a:
            carried_a.observe(event)
        for event in history_b:
            carried_b.observe(event)
        carried_a.compact()
        carried_b.compact()
        narrative_violations += permitted_actions(carried_a.view()) != permitted_actions(
            carried_b.view()
        )
        reconstruction_violations += permitted_actions(reconstruct(history_a)) != permitted_actions(
            reconstruct(history_b)
        )
    return {
        "trials": trials,
        "omission_rate": omission_rate,
        "narrative_violation_rate": narrative_violations / trials,
        "reconstruction_violation_rate": reconstruction_violations / trials,
        # Analytically: the "on" update kept and the "off" update omitted.
        "expected_narrative_violation_rate": (1 - omission_rate) * omission_rate,
    }


def _traces(
    parameters: DriftParameters,
    mutation_rate: float,
    omission_rate: float,
    progress: Callable[[int], None] | None = None,
) -> list[list[Checkpoint]]:
    traces = []
    for index in range(parameters.episodes):
        traces.append(
            episode_checkpoints(
                seed=parameters.seed,
                index=index,
                compactions=parameters.max_horizon,
                interval=parameters.interval,
                mutation_rate=mutation_rate,
                omission_rate=omission_rate,
            )
        )
        if progress is not None and (index + 1) % 250 == 0:
            progress(index + 1)
    return traces


def drift_benchmark_run(
    parameters: DriftParameters,
    on_progress: Callable[[int, int, str], None] | None = None,
) -> dict[str, Any]:
    """The whole benchmark as plain JSON: per-horizon rows, paired history, negative control."""
    parameters.check()
    started = time.perf_counter()
    total = parameters.episodes * 2 + 1

    def progress(offset: int, stage: str) -> Callable[[int], None]:
        def report(done: int) -> None:
            if on_progress is not None:
                on_progress(offset + done, total, stage)

        return report

    traces = _traces(
        parameters,
        parameters.mutation_rate,
        parameters.omission_rate,
        progress(0, "episodes"),
    )
    horizons = [
        horizon_figures(traces, horizon, parameters.interval)
        for horizon in range(parameters.min_horizon, parameters.max_horizon + 1)
    ]
    control_traces = _traces(
        parameters, 0.0, parameters.control_omission_rate, progress(parameters.episodes, "control")
    )
    control = horizon_figures(control_traces, parameters.max_horizon, parameters.interval)
    paired = paired_history(
        seed=parameters.seed, trials=parameters.episodes, omission_rate=parameters.omission_rate
    )
    if on_progress is not None:
        on_progress(total, total, "done")
    stale_rates = [row["stale_checkpoint_rate"] for row in horizons]
    return {
        "parameters": parameters.as_dict(),
        "horizons": horizons,
        "paired_history": paired,
        "negative_control": {
            "mutation_rate": 0.0,
            "omission_rate": parameters.control_omission_rate,
            "horizon": parameters.max_horizon,
            "stale_checkpoint_rate": control["stale_checkpoint_rate"],
            "narrative_accuracy": control["final_narrative_accuracy"],
            "average_checkpoint_accuracy": control["average_checkpoint_accuracy"],
            "reconstruction_exact_rate": control["reconstruction_exact_rate"],
        },
        "checks": {
            "stale_rate_monotonic": all(
                later >= earlier for earlier, later in pairwise(stale_rates)
            ),
            "reconstruction_exact": all(
                row["reconstruction_exact_rate"] == 1.0 for row in horizons
            ),
            "reconstruction_invariant": paired["reconstruction_violation_rate"] == 0.0,
            "negative_control_perfect": control["final_narrative_accuracy"] == 1.0
            and control["reconstruction_exact_rate"] == 1.0,
        },
        "seed_reference": SEED_REFERENCE,
        "elapsed_seconds": round(time.perf_counter() - started, 3),
    }
