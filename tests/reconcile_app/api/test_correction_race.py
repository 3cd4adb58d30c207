"""Two operators correcting one evidence entry at once: one correction, the other 409.

Both used to pass the `already_corrected` check before either had recorded anything, and
both were recorded: two corrections of one entry and, with two replacements, two entries
superseding it, each stating a different value (seen on PostgreSQL with two clients).
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection, connections
from django.utils import timezone

from reconcile_app.errors import DomainError
from reconcile_app.models import Correction, EvidenceEntry
from reconcile_app.services import corrections
from reconcile_app.services.corrections import correction_create
from reconcile_app.services.evidence import evidence_append
from reconcile_app.services.ledger_check import ledger_verify
from tests.conftest import make_person


def _entry() -> None:
    evidence_append(
        kind="observation",
        subject="P17",
        field="pallet_bay",
        value="bay 10",
        source="warehouse-event-ledger",
        observed_at=timezone.now(),
        evidence_id="ev-bay",
    )


def _correct(actor: Any, value: str) -> Any:
    return correction_create(
        evidence_id="ev-bay", reason=f"it was {value}", actor=actor, replacement={"value": value}
    )


def _one_correction_recorded() -> None:
    assert Correction.objects.filter(corrected__evidence_id="ev-bay").count() == 1
    assert EvidenceEntry.objects.filter(supersedes__evidence_id="ev-bay").count() == 1


def test_a_correction_recorded_after_the_check_refuses_the_second(operator, monkeypatch):
    _entry()
    rival = make_person("other-operator", "operator")
    checked = corrections.observed_at_check
    pending = [lambda: _correct(rival.user, "bay 12")]

    def check_then_rival(observed_at: Any) -> Any:
        result = checked(observed_at)
        while pending:
            pending.pop()()  # the other operator's correction lands just after our check
        return result

    monkeypatch.setattr(corrections, "observed_at_check", check_then_rival)
    with pytest.raises(DomainError) as refused:
        _correct(operator.user, "bay 11")
    assert (refused.value.status, refused.value.code) == (409, "already_corrected")
    _one_correction_recorded()
    assert EvidenceEntry.objects.get(supersedes__evidence_id="ev-bay").value == "bay 12"


@pytest.mark.skipif(connection.vendor != "postgresql", reason="real concurrency: PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_two_operators_at_once_record_one_correction():
    _entry()
    people = [make_person(f"operator-{i}", "operator") for i in range(4)]
    barrier = threading.Barrier(len(people))
    seen: list[str] = []

    def run(index: int) -> None:
        try:
            barrier.wait(timeout=30)
            _correct(people[index].user, f"bay {20 + index}")
            seen.append("created")
        except DomainError as exc:
            seen.append(exc.code)
        except BaseException as exc:  # anything else is the finding
            seen.append(f"{type(exc).__name__}: {exc}")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(people))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(seen) == ["already_corrected"] * 3 + ["created"]
    _one_correction_recorded()
    assert ledger_verify().problems == []
