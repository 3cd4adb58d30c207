"""Settings from the environment (config/env.py): a bad value refuses to start, by name."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_int


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


@pytest.mark.parametrize("raw", ["", "  "])
@pytest.mark.parametrize("default", [True, False])
def test_a_boolean_setting_left_empty_keeps_its_default(monkeypatch, raw, default):
    # `RECONCILE_SECURE_COOKIES=` (a compose file's unset variable) once turned secure
    # cookies, the HTTPS redirect and HSTS off in production: empty is not one of the
    # values the README lists, and integers already read it as "unset".
    monkeypatch.setenv("RECONCILE_SECURE_COOKIES", raw)

    assert env_bool("SECURE_COOKIES", default) is default


@pytest.mark.parametrize(
    ("raw", "value"), [("1", True), ("ON", True), ("no", False), (" 0 ", False)]
)
def test_a_boolean_setting_takes_the_documented_spellings(monkeypatch, raw, value):
    monkeypatch.setenv("RECONCILE_SECURE_COOKIES", raw)

    assert env_bool("SECURE_COOKIES", not value) is value


def test_a_boolean_setting_that_is_not_one_refuses_to_start(monkeypatch):
    monkeypatch.setenv("RECONCILE_SECURE_COOKIES", "maybe")

    with pytest.raises(ImproperlyConfigured, match="RECONCILE_SECURE_COOKIES must be a boolean"):
        env_bool("SECURE_COOKIES", True)
