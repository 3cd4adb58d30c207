"""`simulate`: demo agents on the demo estate, through the real services, briefly."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from reconcile_app.demo.estate_loader import demo_estate_load
from reconcile_app.models import (
    Contradiction,
    DecisionSnapshot,
    Effect,
    Escalation,
    MemoryRecord,
    Principal,
)


def simulate(*args: str) -> str:
    out = io.StringIO()
    call_command("simulate", "--interval", "0", "--fail-fast", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def demo(db) -> None:
    demo_estate_load()


def test_refuses_to_run_without_the_demo_estate(db):
    with pytest.raises(CommandError, match="load_demo"):
        simulate("--iterations", "1")


def test_a_brief_run_produces_fresh_console_content(demo):
    before = DecisionSnapshot.objects.count()
    text = simulate("--iterations", "120", "--seed", "7", "--fault-rate", "0.5")
    assert "simulation done: 120 steps" in text
    assert "error:" not in text
    agents = Principal.objects.filter(name__startswith="sim-").values_list("name", flat=True)
    assert set(agents) == {"sim-collections-agent", "sim-warehouse-agent", "sim-dispatch-agent"}
    assert DecisionSnapshot.objects.count() > before + 30
    sim = DecisionSnapshot.objects.filter(subject__startswith="sim-")
    assert set(sim.values_list("result", flat=True)) >= {"allow", "deny", "refuse"}
    assert Effect.objects.filter(subject__startswith="sim-", status="unknown").exists()
    assert Effect.objects.filter(subject__startswith="sim-", status="accepted").exists()
    assert Contradiction.objects.filter(subject__startswith="sim-").exists()
    assert Escalation.objects.filter(snapshot__subject__startswith="sim-").exists()
    # Agents learn: memories superseded by what snapshots read, with provenance.
    assert MemoryRecord.objects.filter(subject__startswith="sim-", status="superseded").exists()


def test_agents_hold_only_their_own_contracts_capabilities(demo):
    simulate("--iterations", "3", "--seed", "1")
    warehouse = Principal.objects.get(name="sim-warehouse-agent")
    assert set(warehouse.capabilities.values_list("decision_class", "action")) == {
        ("warehouse-pick", "pick_pallet")
    }


def test_same_seed_same_story(demo):
    first = simulate("--iterations", "15", "--seed", "3").splitlines()
    second = simulate("--iterations", "15", "--seed", "3").splitlines()
    # Subjects differ (each run opens its own); the sequence of events does not.
    strip = lambda lines: [line.split(" ", 1)[0] for line in lines]  # noqa: E731
    assert strip(first) == strip(second)


@pytest.mark.parametrize("option", [("--iterations", "-1"), ("--fault-rate", "1.5")])
def test_bad_options_are_refused(demo, option):
    with pytest.raises(CommandError):
        simulate(*option)


def test_an_agent_waiting_on_an_escalation_acts_once_it_is_approved(demo, reviewer):
    from random import Random

    from drills_app.simulation import Simulation
    from reconcile_app.services.escalations import escalation_decide

    simulation = Simulation(rng=Random(11), fault_rate=0.0)
    simulation.ensure_setup()
    for _ in range(400):
        simulation.step()
        if simulation.waiting:
            break
    assert simulation.waiting, "no escalation in 400 steps"
    escalation_id, (_, snapshot_id, action, _) = next(iter(simulation.waiting.items()))
    assert simulation.follow_up() is None  # still open: the agent keeps waiting

    escalation_decide(
        escalation_id=escalation_id,
        reviewer=reviewer.user,
        approve=True,
        rationale="the complaint is about fees only",
    )
    line = simulation.step()
    assert f"{escalation_id} approved by rhys-reviewer → effect" in line, line
    effect = Effect.objects.get(snapshot__snapshot_id=snapshot_id)
    assert (effect.action, effect.approved_by) == (action, "rhys-reviewer")
    assert escalation_id not in simulation.waiting


def test_each_step_runs_under_a_request_id_of_its_own(demo):
    """manage.py gives a run one id; a simulation running for hours must not put every step's
    rows and readbacks under it."""
    from config.logs import request_id_var
    from drills_app.simulation import simulation_run

    seen: list[str] = []
    request_id_var.set("the-whole-run")
    try:
        simulation_run(
            iterations=3,
            interval=0,
            jitter=0,
            fault_rate=0,
            seed=3,
            write=lambda line: seen.append(request_id_var.get()),
            sleep=lambda seconds: None,
            fail_fast=True,
        )
    finally:
        request_id_var.set("")

    assert len(set(seen)) == 3 and "the-whole-run" not in seen
