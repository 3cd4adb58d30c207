"""Console sign-ins leave a row in django_session; Django never deletes one past its expiry by
itself (`clearsessions` is left to the deployer), so the scheduler does, or the table grows
with every sign-in for as long as the deployment runs."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.sessions.backends.db import SessionStore
from django.contrib.sessions.models import Session
from django.utils import timezone

from config.queues import DEFAULT
from reconcile_app.tasks import sessions_expired_clear_task
from tests.test_queues import queue_of

TASK = "reconcile_app.tasks.sessions_expired_clear_task"


def _session(expires_in: timedelta) -> str:
    store = SessionStore()
    store["_auth_user_id"] = "1"
    store.set_expiry(timezone.now() + expires_in)
    store.create()
    return store.session_key or ""


@pytest.mark.django_db
def test_expired_sessions_are_deleted_and_live_ones_kept():
    live = _session(timedelta(days=1))
    _session(timedelta(seconds=-1))
    _session(timedelta(days=-30))

    assert sessions_expired_clear_task() == 2

    assert list(Session.objects.values_list("session_key", flat=True)) == [live]
    assert sessions_expired_clear_task() == 0


def test_the_scheduler_clears_them_hourly_on_the_default_queue():
    entries = [e for e in settings.CELERY_BEAT_SCHEDULE.values() if e["task"] == TASK]

    assert [e["schedule"] for e in entries] == [3600.0]
    assert queue_of(TASK) == DEFAULT
