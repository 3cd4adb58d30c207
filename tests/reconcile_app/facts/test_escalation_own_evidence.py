"""Four eyes over a fact record's grounds: approving a fact key's escalation never keeps a
record derived from evidence the reviewer attested (the cold read confirmed it did: 200), as
it never keeps a record they wrote and never approves a decision or promotion resting on
their evidence. Another candidate, or a rejection, stays theirs."""

from __future__ import annotations

import re

import pytest

from reconcile_app.models import Escalation, MemoryRecord
from tests.conftest import Persona, ago, make_person
from tests.reconcile_app.console.conftest import signed_in
from tests.reconcile_app.facts.conftest import authority, current, remember
from tests.reconcile_app.facts.test_escalations_api import KEY, decide


def attested(persona) -> str:
    response = persona.post(
        "/api/v1/evidence",
        {
            "kind": "observation",
            "subject": "math-eval",
            "field": "baseline",
            "value": "ckpt-0520",
            "source": "registry",
            "observed_at": ago(minutes=10).isoformat(),
        },
    )
    assert response.status_code == 201, response.content
    return str(response.json()["evidence_id"])


@pytest.fixture
def ambiguity_grounded_on_me(registry, agent) -> tuple[Persona, str, str]:
    """Two candidates for KEY, one derived from evidence an operator-reviewer attested: that
    person, the entry, and the escalation the agent's read raised."""
    both = make_person("rowan-both", ["operator", "reviewer"])
    authority(KEY)
    mine = attested(both)
    remember(agent, KEY, "theirs", "ckpt-0519", "registry@r18")
    remember(agent, KEY, "grounded-on-me", "ckpt-0520", "registry@r18", derived_from=[mine])
    return both, mine, current(agent, KEY).json()["escalation_id"]


def test_a_record_derived_from_my_evidence_is_not_mine_to_keep(ambiguity_grounded_on_me):
    both, mine, raised = ambiguity_grounded_on_me

    refused = decide(
        both, raised, "approve", rationale="mine checks out", selected_ref="grounded-on-me"
    )

    assert (refused.status_code, refused.json()["code"]) == (403, "self_approval_forbidden")
    assert refused.json()["attested"] == [mine]
    assert Escalation.objects.get(escalation_id=raised).status == "open"
    assert MemoryRecord.objects.filter(fact_key=KEY, status="current").count() == 2
    kept = decide(both, raised, "approve", rationale="the registry's", selected_ref="theirs")
    assert kept.json()["status"] == "approved"


def test_nor_by_retiring_the_ownerless(registry, agent):
    both = make_person("rowan-both", ["operator", "reviewer"])
    key = "baseline.orphan"
    authority(key)
    mine = attested(both)
    remember(agent, key, "grounded-on-me", "ckpt-1", "registry@r18", derived_from=[mine])
    remember(agent, key, "orphan", "ckpt-2", "registry@r18", owner=None)
    raised = current(agent, key).json()["escalation_id"]

    refused = decide(both, raised, "approve", rationale="drop the orphan")

    assert (refused.status_code, refused.json()["attested"]) == (403, [mine])
    assert decide(both, raised, "reject", rationale="not mine to say").status_code == 200


def test_the_console_offers_that_record_to_another_reviewer_only(ambiguity_grounded_on_me):
    both, _, raised = ambiguity_grounded_on_me

    page = signed_in(both).get(f"/escalations/{raised}/").content.decode()

    choice = re.search(
        r'<input type="radio" name="selected_ref" value="grounded-on-me"[^>]*>', page
    )
    assert choice is not None and "disabled" in choice.group(0)
    assert 'id="grounded-grounded-on-me"' in page
    other = re.search(r'<input type="radio" name="selected_ref" value="theirs"[^>]*>', page)
    assert other is not None and "disabled" not in other.group(0)
