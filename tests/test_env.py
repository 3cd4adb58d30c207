"""Settings from the environment (config/env.py): a bad value refuses to start, by name."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.env import env_int


def test_an_integer_setting_below_its_minimum_refuses_to_start(monkeypatch):
    monkeypatch.setenv("RECONCILE_OWNER_TASK_SOFT_TIME_LIMIT", "0")

    with pytest.raises(ImproperlyConfigured, match="OWNER_TASK_SOFT_TIME_LIMIT must be at least 1"):
        env_int("OWNER_TASK_SOFT_TIME_LIMIT", 120, minimum=1)


@pytest.mark.parametrize(("raw", "value"), [("", 120), ("1", 1), ("300", 300)])
def test_an_integer_setting_at_or_above_its_minimum_is_taken(monkeypatch, raw, value):
    monkeypatch.setenv("RECONCILE_OWNER_TASK_SOFT_TIME_LIMIT", raw)

    assert env_int("OWNER_TASK_SOFT_TIME_LIMIT", 120, minimum=1) == value


def test_an_integer_setting_that_is_not_one_refuses_to_start(monkeypatch):
    monkeypatch.setenv("RECONCILE_OWNER_TASK_SOFT_TIME_LIMIT", "two minutes")

    with pytest.raises(ImproperlyConfigured, match="must be an integer"):
        env_int("OWNER_TASK_SOFT_TIME_LIMIT", 120, minimum=1)
