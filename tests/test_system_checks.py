"""System checks refuse settings that would make the product misbehave."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from reconcile_app.checks import owner_timeout_within_task_limit


def test_the_default_owner_timeout_passes():
    assert owner_timeout_within_task_limit() == []


def test_a_default_owner_timeout_the_owner_tasks_cannot_wait_for_refuses_to_start(settings):
    settings.RECONCILE_OWNER_TASK_SOFT_TIME_LIMIT = 120
    settings.RECONCILE_HTTP_TIMEOUT_SECONDS = 24.001

    errors = owner_timeout_within_task_limit()

    assert [error.id for error in errors] == ["reconcile.E001"]
    assert "RECONCILE_HTTP_TIMEOUT_MS is 24001; it may be at most 24000" in errors[0].msg
    with pytest.raises(SystemCheckError, match=r"reconcile\.E001"):
        call_command("check")


def test_a_default_owner_timeout_at_the_bound_passes(settings):
    settings.RECONCILE_OWNER_TASK_SOFT_TIME_LIMIT = 120
    settings.RECONCILE_HTTP_TIMEOUT_SECONDS = 24.0

    assert owner_timeout_within_task_limit() == []
