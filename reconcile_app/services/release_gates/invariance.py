"""Gate `invariance`: the decision depends on the reduced state, not on the history.

Seed 002's history-substitution test: "Swap two different histories that reduce to the same
state and verify material decision invariance", and its delivery test: "Duplicate and
reorder admissible events within stated guarantees; confirm idempotent, deterministic
reconstruction". Only for contracts with a reducer.

Method: seeded random histories over the event types the reducer declares
(`Reducer.event_types`) are folded with `reducers.base.fold`. (1) Each history delivered
twice over and in reverse order (same events, same ordering key) must fold to exactly the
same result. (2) Histories that fold to the same field values are grouped; each is read as
the contract's event-sourced fields would be (version, valid time, inputs: what differs
between histories), the other fields at the state the policy allows, and the engine decides
for every proposal: the result and permitted actions must be the same across the group.
"""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import datetime, timedelta

from reconcile_app.canonical import canonical_json
from reconcile_app.models import Source
from reconcile_app.reconciliation.types import FieldRead
from reconcile_app.reducers import base as reducer_base
from reconcile_app.reducers import reducer_named
from reconcile_app.services.release_gates.world import SUBJECT, Finding, State, World

HISTORIES = 48
MAX_EVENTS = 8
PAIRS_PER_STATE = 3
SEED = 2002  # fixed: the same contract always meets the same histories


def histories(event_types: tuple[str, ...], now: datetime) -> list[list[reducer_base.Event]]:
    rng = random.Random(SEED)  # noqa: S311 - reproducible histories, not secrets
    found: list[list[reducer_base.Event]] = [[]]
    for index in range(1, HISTORIES):
        length = rng.randint(1, MAX_EVENTS)
        start = now - timedelta(days=length + 1)
        found.append(
            [
                reducer_base.Event(
                    event_id=f"h{index}-{seq}",
                    seq=seq,
                    type=rng.choice(event_types),
                    subject=SUBJECT,
                    field="",
                    value=None,
                    valid_from=start + timedelta(days=seq),
                    recorded_at=start + timedelta(days=seq, minutes=1),
                )
                for seq in range(1, length + 1)
            ]
        )
    return found


def _kinds(history: list[reducer_base.Event]) -> str:
    return "[" + ", ".join(event.type for event in history) + "]"


def _folded_reads(
    world: World, folded: reducer_base.Folded, folded_fields: list[str], label: str
) -> dict[str, FieldRead]:
    return {
        name: replace(
            world.ok_read(name, folded.values.get(name)),
            version=folded.last_seq,
            valid_from=folded.valid_from,
            recorded_at=folded.recorded_at,
            detail=f"folded {len(folded.applied)} events with {label}",
            inputs=folded.inputs.get(name),
        )
        for name in folded_fields
    }


def _decide(
    world: World, here: State, folded: reducer_base.Folded, folded_fields: list[str], label: str
) -> tuple[str, list[str]]:
    """The material decision (result, permitted actions) with the folded fields read as
    this fold left them."""
    overrides = _folded_reads(world, folded, folded_fields, label)
    reads = [overrides.get(read.field, read) for read in world.reads(here)]
    decision = world.evaluate(here, reads=reads)["decision"]
    return decision["result"], decision["permitted_actions"]


def invariance(world: World) -> Finding:
    spec = world.spec
    reducer = reducer_named(spec.reducer)
    if reducer is None:
        return Finding(False, f"Reducer {spec.reducer} is not registered.", 0)
    if not reducer.event_types:
        return Finding(
            False,
            f"Reducer {reducer.label} declares no event types, so no history can be built "
            "for the history-substitution check.",
            0,
        )
    sources = set(
        Source.objects.filter(
            name__in={field.source for field in spec.fields}, mode="event_sourced"
        ).values_list("name", flat=True)
    )
    folded_fields = [field.name for field in spec.fields if field.source in sources]
    checks = 0
    groups: dict[str, list[tuple[list[reducer_base.Event], reducer_base.Folded]]] = {}
    for history in histories(reducer.event_types, world.now):
        folded = reducer_base.fold(reducer, history)
        for delivery, delivered in (
            ("delivered twice", [*history, *history]),
            ("delivered in reverse order", history[::-1]),
        ):
            checks += 1
            redelivered = reducer_base.fold(reducer, delivered)
            if redelivered != folded:
                return Finding(
                    False,
                    f"History {_kinds(history)} {delivery} folds with {reducer.label} to "
                    f"{redelivered.values!r} ({redelivered.status}), delivered once in order "
                    f"to {folded.values!r} ({folded.status}); expected the same.",
                    checks,
                )
        if folded.status == "ok":
            groups.setdefault(canonical_json(folded.values), []).append((history, folded))
    state = world.allowed_state()
    bindings = world.bindings()
    pairs = 0
    for members in groups.values():
        # The shortest history against the longest ones: seed 002's clean history against
        # the one with false starts and reversals.
        members.sort(key=lambda member: len(member[0]))
        first_history, first = members[0]
        # The values agree across the group; the reads still differ in version, valid time
        # and inputs, which is where a history could leak into the decision.
        values = {**state.values, **{name: first.values.get(name) for name in folded_fields}}
        states = [State(values=values, binding=binding) for binding in bindings]
        label = reducer.label
        expected = (
            [_decide(world, here, first, folded_fields, label) for here in states]
            if len(members) > 1
            else []
        )
        # Histories in the same group differ the same ways (length, versions, valid time):
        # a few of them make the point, however many the seed drew.
        for history, folded in members[:0:-1][:PAIRS_PER_STATE]:
            pairs += 1
            for here, wanted in zip(states, expected, strict=True):
                checks += 1
                got = _decide(world, here, folded, folded_fields, label)
                if got != wanted:
                    return Finding(
                        False,
                        f"Histories {_kinds(first_history)} and {_kinds(history)} both fold "
                        f"with {reducer.label} to {first.values!r}, yet decide {wanted} and "
                        f"{got} ({here.describe(spec)}); expected the same decision.",
                        checks,
                    )
    return Finding(
        True,
        f"{len(groups)} reduced states from {HISTORIES} seeded histories of {reducer.label}: "
        f"duplicated and reordered delivery folded identically, and {pairs} pairs of "
        f"histories with the same state decided alike for {len(bindings)} proposals "
        f"({checks} checks).",
        checks,
    )
