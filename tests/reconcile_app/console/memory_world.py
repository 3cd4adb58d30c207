"""Memories for the console's memory pages, written through the real service."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Group

from reconcile_app.models import Escalation, MemoryRecord
from reconcile_app.services.escalations import escalation_decide
from reconcile_app.services.memory import memory_admit
from tests.conftest import Persona, make_person
from tests.factories import ACCOUNT, EvidenceFactory

BASIS = "ev-playbook"


@pytest.fixture
def basis(db: Any) -> str:
    """What the memories derive from: a note about the procedure, not about state."""
    EvidenceFactory(
        evidence_id=BASIS, subject="collections-playbook", field="step", value="re-read"
    )
    return BASIS


def write(persona: Persona, memory_class: str = "runbooks", **extra: Any) -> MemoryRecord:
    values = {
        "subject": ACCOUNT,
        "purpose": "collections",
        "field": "collections_status",
        "value": "after a 412, read again before retrying",
        "derived_from": [BASIS],
        **extra,
    }
    return memory_admit(agent=persona.principal, memory_class=memory_class, **values)


def promotion_of(record: MemoryRecord) -> Escalation:
    return record.promotions.get()


def decide(record: MemoryRecord, reviewer: Persona, *, approve: bool = True) -> MemoryRecord:
    escalation_decide(
        escalation_id=promotion_of(record).escalation_id,
        reviewer=reviewer.user,
        approve=approve,
        rationale="decided in a fixture",
    )
    record.refresh_from_db()
    return record


@pytest.fixture
def writer_reviewer(db: Any) -> Persona:
    """A person who is operator and reviewer: writes memories, and reviews others'."""
    person = make_person("dual-role", "operator")
    person.user.groups.add(Group.objects.get_or_create(name="reviewer")[0])
    return person
