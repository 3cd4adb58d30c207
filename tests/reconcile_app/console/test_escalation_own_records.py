"""A reviewer who also operates may write fact records: the console never lets them keep
their own record when an ambiguity is decided (escalation_decide refuses it too)."""

from __future__ import annotations

import re

import pytest

from reconcile_app.models import Escalation
from tests.conftest import make_person
from tests.reconcile_app.console.conftest import signed_in
from tests.reconcile_app.console.test_escalations import approve
from tests.reconcile_app.facts.conftest import authority, current, remember

KEY = "baseline.math-eval"


@pytest.fixture
def both(db):
    return make_person("rowan-both", ["operator", "reviewer"])


@pytest.fixture
def with_my_record(registry, agent, both) -> Escalation:
    authority(KEY)
    remember(agent, KEY, "theirs", "ckpt-0519", "registry@r18")
    remember(both, KEY, "mine", "ckpt-0520", "registry@r18")
    raised = current(agent, KEY).json()["escalation_id"]
    return Escalation.objects.get(escalation_id=raised)


def test_my_record_cannot_be_chosen_on_the_page(with_my_record, both):
    page = signed_in(both).get(f"/escalations/{with_my_record.escalation_id}/").content.decode()
    assert 'value="mine" disabled aria-describedby="written-mine"' in page
    assert "You wrote this record: another reviewer must choose it." in page
    assert 'value="theirs" required>' in page  # the other stays a choice


def test_a_forged_choice_of_my_record_is_refused_and_shown(with_my_record, both):
    response = approve(signed_in(both), with_my_record, rationale="mine", selected_ref="mine")
    assert response.status_code == 403
    refusal = re.search(
        r'<div class="alert" role="alert" id="decision-error">(.*?)</div>',
        response.content.decode(),
        re.S,
    )
    assert refusal is not None
    assert "a reviewer never keeps a record they wrote (mine)" in refusal.group(1)
    assert "self_approval_forbidden" in refusal.group(1)
    with_my_record.refresh_from_db()
    assert with_my_record.status == "open"


def test_an_ownerless_records_escalation_asks_for_a_selection_when_mine_would_stay(
    registry, agent, both
):
    key = "baseline.orphan"
    authority(key)
    remember(both, key, "mine", "ckpt-1", "registry@r18")
    remember(agent, key, "orphan", "ckpt-2", "registry@r18", owner=None)
    raised = Escalation.objects.get(escalation_id=current(agent, key).json()["escalation_id"])
    assert raised.code == "owner_missing"

    page = signed_in(both).get(f"/escalations/{raised.escalation_id}/").content.decode()
    assert "(required: without one, the ownerless records are retired and mine, which you" in page
    assert "(optional: without one" not in page
    # Nor may the ownerless record be kept: this reviewer has nothing to approve, only reject.
    assert 'value="orphan" disabled aria-describedby="unkeepable-orphan" required>' in page


def test_an_ownerless_record_is_not_offered_to_keep(registry, agent, reviewer):
    """Keeping the ownerless record would leave the owner missing (escalation_decide
    refuses it): the page does not offer it."""
    key = "baseline.orphan"
    authority(key)
    remember(agent, key, "owned", "ckpt-1", "registry@r18")
    remember(agent, key, "orphan", "ckpt-2", "registry@r18", owner=None)
    raised = current(agent, key).json()["escalation_id"]
    page = signed_in(reviewer).get(f"/escalations/{raised}/").content.decode()
    assert 'value="orphan" disabled aria-describedby="unkeepable-orphan"' in page
    assert "It has no owner: approving cannot keep it." in page
    assert re.search(r'value="owned"\s*>', page)
