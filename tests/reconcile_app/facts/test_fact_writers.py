"""Facts have writers (issue 11 point 5; docs/api.md `fact:PATTERN`).

Side doors shut: any agent writing or superseding any fact record, whoever wrote it; a
memory derived from a frozen key's candidate slipping past the freeze; `facts/{key}/current`
serving records of a quarantined memory class.
"""

from __future__ import annotations

import pytest

from reconcile_app.models import AuditEvent, MemoryRecord
from reconcile_app.services.quarantine import quarantine_apply, quarantine_create
from tests.conftest import make_agent
from tests.reconcile_app.facts.conftest import REGISTRY, authority, current, remember

KEY = "baseline.math-eval"


def write(persona, fact_key: str = KEY, memory_id: str = "baseline-v18", **extra):
    body = {
        "memory_id": memory_id,
        "memory_class": "operational",
        "subject": "math-eval",
        "purpose": "nightly-eval-summary",
        "fact_key": fact_key,
        "value": "ckpt-0519",
        "owner": REGISTRY,
        "source_revision": "registry@r18",
        "derived_from": ["ev-registry-r18"],
        **extra,
    }
    return persona.post("/api/v1/memories", body)


def refused(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == code
    return response.json()


def test_writing_a_fact_needs_a_matching_fact_capability(registry, outsider):
    evals = make_agent("eval-agent", ["fact:baseline.*"])

    assert write(evals).status_code == 201
    body = refused(write(outsider, memory_id="baseline-x"), 403, "fact_write_not_allowed")
    assert body["fact_key"] == KEY
    refused(
        write(evals, fact_key="quota.cluster-a", memory_id="q-1"), 403, "fact_write_not_allowed"
    )
    assert list(MemoryRecord.objects.values_list("memory_id", flat=True)) == ["baseline-v18"]


def test_the_pattern_is_a_glob_on_the_whole_key(registry):
    narrow = make_agent("math-agent", ["fact:baseline.math-*"])
    assert write(narrow).status_code == 201
    refused(
        write(narrow, fact_key="baseline.code-eval", memory_id="c-1"), 403, "fact_write_not_allowed"
    )
    refused(
        write(narrow, fact_key="xbaseline.math-eval", memory_id="c-2"),
        403,
        "fact_write_not_allowed",
    )


def test_a_memory_without_a_fact_key_needs_no_fact_capability(registry, outsider):
    response = outsider.post(
        "/api/v1/memories",
        {
            "memory_class": "episodic",
            "subject": "math-eval",
            "purpose": "nightly-eval-summary",
            "field": "baseline",
            "value": "ckpt-0519",
            "derived_from": ["ev-registry-r18"],
        },
    )
    assert response.status_code == 201, response.content


def test_a_writer_of_the_key_supersedes_a_record_another_agent_wrote(registry, agent):
    authority(KEY)
    remember(agent, KEY, "baseline-v17", "ckpt-0412", "registry@r17")
    colleague = make_agent("eval-agent", ["fact:baseline.*"])

    response = write(colleague, supersedes="baseline-v17")

    assert response.status_code == 201, response.content
    assert MemoryRecord.objects.get(memory_id="baseline-v17").status == "superseded"


def test_an_agent_without_the_key_cannot_supersede_it(registry, agent, outsider):
    remember(agent, KEY, "baseline-v17", "ckpt-0412", "registry@r17")
    refused(write(outsider, supersedes="baseline-v17"), 403, "fact_write_not_allowed")
    assert MemoryRecord.objects.get(memory_id="baseline-v17").status == "current"


def test_another_agents_plain_memory_is_not_there_to_supersede(registry, agent, outsider):
    mine = agent.post(
        "/api/v1/memories",
        {
            "memory_id": "note-1",
            "memory_class": "episodic",
            "subject": "math-eval",
            "purpose": "nightly-eval-summary",
            "field": "baseline",
            "value": "ckpt-0412",
            "derived_from": ["ev-registry-r18"],
        },
    )
    assert mine.status_code == 201, mine.content
    response = outsider.post(
        "/api/v1/memories",
        {
            "memory_class": "episodic",
            "subject": "math-eval",
            "purpose": "nightly-eval-summary",
            "field": "baseline",
            "value": "ckpt-0519",
            "derived_from": ["ev-registry-r18"],
            "supersedes": "note-1",
        },
    )
    body = refused(response, 400, "unknown_reference")
    assert body["missing"] == ["memory:note-1"]
    assert MemoryRecord.objects.get(memory_id="note-1").status == "current"


def test_a_fact_write_names_no_record_outside_its_key_nor_what_it_is_about(
    registry, agent, operator
):
    """A fact key's writers supersede any record of that key; any other record of another
    principal is not there (as for a plain write), rather than "about <subject> <field>"."""
    note = agent.post(
        "/api/v1/memories",
        {
            "memory_id": "note-1",
            "memory_class": "episodic",
            "subject": "acct-private",
            "purpose": "collections",
            "field": "collections_status",
            "value": "hold",
            "derived_from": ["ev-registry-r18"],
        },
    )
    assert note.status_code == 201, note.content
    assert write(operator, fact_key="quota.cluster-a", memory_id="q-ops").status_code == 201
    colleague = make_agent("eval-agent", ["fact:baseline.*"])

    for theirs in ("note-1", "q-ops"):
        body = refused(
            write(colleague, memory_id=f"b-{theirs}", supersedes=theirs), 400, "unknown_reference"
        )
        assert body["missing"] == [f"memory:{theirs}"]
        assert "acct-private" not in str(body) and "quota" not in str(body)
    assert set(MemoryRecord.objects.values_list("status", flat=True)) == {"current"}


def test_an_operator_writes_any_fact_and_is_audited(registry, operator):
    response = write(operator, fact_key="quota.cluster-a", memory_id="q-ops", note="set by ops")
    assert response.status_code == 201, response.content
    row = AuditEvent.objects.get(action="memory.write")
    assert (row.actor_name, row.object_ref, row.reason) == (operator.name, "q-ops", "set by ops")
    assert row.after["target"] == "quota.cluster-a"


def test_a_memory_derived_from_a_frozen_keys_candidate_is_frozen_too(registry, agent):
    authority(KEY)
    remember(agent, KEY, "baseline-v18", "ckpt-0519", "registry@r18")
    remember(agent, KEY, "baseline-v18b", "ckpt-0520", "registry@r18")
    ambiguous = current(agent, KEY)
    assert ambiguous.json()["code"] == "authority_ambiguous"
    escalation_id = ambiguous.json()["escalation_id"]

    response = agent.post(
        "/api/v1/memories",
        {
            "memory_class": "episodic",
            "subject": "math-eval",
            "purpose": "nightly-eval-summary",
            "field": "summary_baseline",
            "value": "ckpt-0520",
            "derived_from": ["memory:baseline-v18b"],
        },
    )

    body = refused(response, 423, "fact_key_frozen")
    assert (body["escalation_id"], body["fact_key"]) == (escalation_id, KEY)
    assert not MemoryRecord.objects.filter(field="summary_baseline").exists()


@pytest.mark.parametrize("persona_name", ["agent", "auditor"])
def test_current_refuses_while_the_records_class_is_quarantined(
    registry, agent, operator, request, persona_name
):
    authority(KEY)
    remember(agent, KEY, "baseline-v18", "ckpt-0519", "registry@r18")
    assert current(agent, KEY).status_code == 200
    quarantine = quarantine_create(
        scope="memory_class", target="operational", reason="poisoned summaries", actor=operator.user
    )
    quarantine_apply(quarantine_id=quarantine.quarantine_id)

    body = refused(
        current(request.getfixturevalue(persona_name), KEY), 423, "memory_class_quarantined"
    )
    assert body["candidates"] == ["baseline-v18"]
    assert "escalation_id" in body
