"""The queue's Age column sorts by the age it shows: how long an open escalation has waited
so far, and how long a decided one waited for its decision, not by when each was opened."""

from __future__ import annotations

import re
from datetime import timedelta

from django.utils import timezone

from reconcile_app.models import Escalation
from tests.reconcile_app.console.conftest import ambiguous_fact


def row_ids(page: str) -> list[str]:
    return re.findall(r'<tr id="escalation-(esc_[0-9a-f]+)"', page)


def decided(escalation: Escalation, *, opened_days_ago: float, waited: timedelta) -> None:
    opened = timezone.now() - timedelta(days=opened_days_ago)
    Escalation.objects.filter(pk=escalation.pk).update(
        status="approved", opened_at=opened, decided_at=opened + waited
    )


def test_decided_escalations_sort_by_how_long_they_waited(reviewer_browser, registry, agent):
    # Opened later but waited a day; opened earlier but decided within a minute.
    slow = ambiguous_fact(agent, agent, "baseline.slow")
    quick = ambiguous_fact(agent, agent, "baseline.quick")
    decided(slow, opened_days_ago=1, waited=timedelta(hours=23))
    decided(quick, opened_days_ago=2, waited=timedelta(minutes=1))

    shortest_first = reviewer_browser.get("/escalations/?status=approved&sort=age")
    longest_first = reviewer_browser.get("/escalations/?status=approved&sort=-age")

    assert row_ids(shortest_first.content.decode()) == [quick.escalation_id, slow.escalation_id]
    assert row_ids(longest_first.content.decode()) == [slow.escalation_id, quick.escalation_id]


def test_on_every_tab_an_open_escalation_ages_until_now(reviewer_browser, registry, agent):
    # Open for two days so far, against one opened earlier that waited an hour.
    waiting = ambiguous_fact(agent, agent, "baseline.waiting")
    Escalation.objects.filter(pk=waiting.pk).update(opened_at=timezone.now() - timedelta(days=2))
    answered = ambiguous_fact(agent, agent, "baseline.answered")
    decided(answered, opened_days_ago=3, waited=timedelta(hours=1))

    page = reviewer_browser.get("/escalations/?status=all&sort=-age").content.decode()

    assert row_ids(page) == [waiting.escalation_id, answered.escalation_id]
