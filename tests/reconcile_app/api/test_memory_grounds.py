"""A memory whose grounds were corrected says so on its own answer (`grounds_corrected`): its
status stays as it was (claims are checked against the owners' state whatever a memory rests
on), but an agent or an auditor reading it learns it rests on withdrawn evidence."""

from __future__ import annotations

from tests.reconcile_app.effects.conftest import (  # noqa: F401
    SUBJECT,
    collectible,
    remember_collect,
)

remember = remember_collect


def test_a_memory_on_corrected_evidence_names_the_correction(collectible, agent, operator):
    memory_id = remember(agent, ["ev-collect"])
    # Made from the first through a memory: its grounds are the first one's.
    built_on = remember(agent, [f"memory:{memory_id}"])
    assert agent.client.get(f"/api/v1/memories/{memory_id}").json()["grounds_corrected"] == []

    corrected = operator.post(
        "/api/v1/corrections",
        {"evidence_id": "ev-collect", "reason": "entered against the wrong account"},
    )
    assert corrected.status_code in (201, 202), corrected.content

    correction_id = corrected.json()["correction_id"]
    for record in (memory_id, built_on):
        shown = agent.client.get(f"/api/v1/memories/{record}").json()
        assert shown["grounds_corrected"] == [
            {"evidence_id": "ev-collect", "correction_id": correction_id}
        ]
        assert shown["status"] == "current"
    # The list stays as it was (one query per page, not one walk per row).
    listed = agent.client.get("/api/v1/memories", {"subject": SUBJECT}).json()["results"]
    assert all("grounds_corrected" not in item for item in listed)


def test_the_answer_costs_the_same_however_deep_the_derivation(
    collectible, agent, django_assert_max_num_queries
):
    shallow = remember(agent, ["ev-collect"])
    deep = shallow
    for _ in range(5):
        deep = remember(agent, [f"memory:{deep}"])
    with django_assert_max_num_queries(12) as shallow_run:
        agent.client.get(f"/api/v1/memories/{shallow}")
    with django_assert_max_num_queries(len(shallow_run.captured_queries)):
        agent.client.get(f"/api/v1/memories/{deep}")
