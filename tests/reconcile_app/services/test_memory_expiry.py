"""memories_expire: retirement by date follows the kind. Episodes, preferences and facts
expire after their valid_until (inclusive through it); procedures and policy retire only by
review, whatever date they carry."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from reconcile_app.models import MemoryRecord, MemoryStatusEvent
from reconcile_app.services.escalations import escalation_decide
from reconcile_app.services.memory import fact_today, memories_expire, memory_admit
from tests.factories import ACCOUNT, EvidenceFactory

# Ahead of the day the tests run: a memory whose valid_until has already passed is refused
# when written (422 valid_until_past), so the expiry runs are dated forward instead.
DUE = date.today() + timedelta(days=60)
AFTER = DUE + timedelta(days=1)


@pytest.fixture
def evidence(db):
    return [
        EvidenceFactory(evidence_id="ev-seen").evidence_id,
        EvidenceFactory(
            evidence_id="ev-consent", kind="consent", field="contact_channel", value="agreed"
        ).evidence_id,
    ]


def admit(agent, memory_class: str, *, valid_until: date | None = DUE, **extra) -> MemoryRecord:
    values = {
        "subject": ACCOUNT,
        "purpose": "collections",
        "field": "collections_status",
        "value": f"{memory_class} value",
        "derived_from": ["ev-seen"],
        **extra,
    }
    return memory_admit(
        agent=agent.principal, memory_class=memory_class, valid_until=valid_until, **values
    )


def promoted(record: MemoryRecord, reviewer) -> MemoryRecord:
    escalation_decide(
        escalation_id=record.promotions.get().escalation_id,
        reviewer=reviewer.user,
        approve=True,
        rationale="the owner's procedure",
    )
    record.refresh_from_db()
    assert record.status == "active"
    return record


@pytest.fixture
def one_of_each(agent, reviewer, evidence) -> dict[str, MemoryRecord]:
    return {
        "episodic": admit(agent, "episodic"),
        "preference": admit(
            agent,
            "customer-preferences",
            field="contact_channel",
            derived_from=["ev-consent"],
        ),
        "fact": admit(
            agent,
            "operational",
            field="",
            fact_key="collections.account-17",
            owner="servicing-team",
            source_revision="case-service@42",
        ),
        "procedural": promoted(admit(agent, "runbooks"), reviewer),
        "policy": promoted(admit(agent, "house-rules"), reviewer),
    }


def statuses(records: dict[str, MemoryRecord]) -> dict[str, str]:
    return {
        kind: MemoryRecord.objects.values_list("status", flat=True).get(pk=record.pk)
        for kind, record in records.items()
    }


def test_nothing_expires_through_its_valid_until(one_of_each):
    assert memories_expire(today=DUE) == 0
    assert set(statuses(one_of_each).values()) == {"current", "active"}


def test_episodes_preferences_and_facts_expire_procedures_and_policy_do_not(one_of_each):
    assert memories_expire(today=AFTER) == 3
    assert statuses(one_of_each) == {
        "episodic": "expired",
        "preference": "expired",
        "fact": "expired",
        "procedural": "active",
        "policy": "active",
    }
    expired = MemoryStatusEvent.objects.filter(status="expired")
    assert {event.memory_id for event in expired} == {
        one_of_each[kind].pk for kind in ("episodic", "preference", "fact")
    }
    assert all("valid_until passed" in event.cause for event in expired)


def test_policy_and_procedures_never_expire_by_date_however_late(one_of_each):
    memories_expire(today=date(2099, 1, 1))
    assert statuses(one_of_each)["procedural"] == statuses(one_of_each)["policy"] == "active"


def test_a_rerun_moves_nothing_twice(one_of_each):
    assert memories_expire(today=AFTER) == 3
    assert memories_expire(today=AFTER + timedelta(days=1)) == 0
    assert MemoryStatusEvent.objects.filter(status="expired").count() == 3


def test_an_episode_without_valid_until_expires_after_its_class_ttl(agent, evidence):
    record = admit(agent, "episodic", valid_until=None)
    ttl_end = fact_today() + timedelta(days=30)
    assert record.valid_until == ttl_end
    assert memories_expire(today=ttl_end) == 0
    assert memories_expire(today=ttl_end + timedelta(days=1)) == 1
    record.refresh_from_db()
    assert record.status == "expired"


def test_a_suggestion_is_not_in_force_so_it_does_not_expire(agent, evidence):
    suggestion = admit(agent, "runbooks")
    assert memories_expire(today=date(2099, 1, 1)) == 0
    suggestion.refresh_from_db()
    assert suggestion.status == "suggested"
