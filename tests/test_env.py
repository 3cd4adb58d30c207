"""Settings from the environment (config/env.py): a bad value refuses to start, by name."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_int, env_list
from tests.fresh_interpreter import fresh_python


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


@pytest.mark.parametrize("raw", ["", "  ", " , "])
def test_a_list_setting_left_empty_keeps_its_default(monkeypatch, raw):
    # `RECONCILE_ALLOWED_HOSTS=` allowed no host at all: every request a 400.
    monkeypatch.setenv("RECONCILE_ALLOWED_HOSTS", raw)

    assert env_list("ALLOWED_HOSTS", ["localhost"]) == ["localhost"]


def test_a_list_setting_takes_its_items(monkeypatch):
    monkeypatch.setenv("RECONCILE_ALLOWED_HOSTS", " reconcile.example , 10.0.0.5,")

    assert env_list("ALLOWED_HOSTS", ["localhost"]) == ["reconcile.example", "10.0.0.5"]


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


SETTINGS_OF = (
    "import json, django; from django.conf import settings; django.setup(); "
    "print(json.dumps([settings.REST_FRAMEWORK['DEFAULT_THROTTLE_RATES'], "
    "settings.RECONCILE_FACT_TIMEZONE, str(settings.VAR_DIR), settings.RECONCILE_FALLBACK_OWNER, "
    "str(settings.DATABASES['default']['NAME'])]))"
)


def settings_loaded(tmp_path, **variables: str) -> tuple[dict[str, str], str]:
    rates, timezone, *_ = settings_read(tmp_path, **variables)
    return rates, timezone


def settings_read(tmp_path, **variables: str) -> list:
    environment = {
        **os.environ,
        "RECONCILE_VAR_DIR": str(tmp_path),
        "DATABASE_URL": "",
        **variables,
    }
    return list(json.loads(fresh_python(SETTINGS_OF, env=environment).splitlines()[-1]))


def settings_refused(tmp_path, **variables: str) -> str:
    environment = {**os.environ, "RECONCILE_VAR_DIR": str(tmp_path), **variables}
    with pytest.raises(subprocess.CalledProcessError) as refused:
        fresh_python(SETTINGS_OF, env=environment)
    return refused.value.stderr


@pytest.mark.parametrize("raw", ["", " "])
def test_rate_settings_left_empty_keep_their_defaults(tmp_path, raw):
    # `RECONCILE_API_RATE=` (a compose file passing an unset variable on) was taken as the
    # rate "": every API request then answered 500 internal_error from the throttle.
    rates, _ = settings_loaded(tmp_path, RECONCILE_API_RATE=raw, RECONCILE_API_ANON_RATE=raw)

    assert rates == {"principal": "1200/min", "anon": "120/min"}


@pytest.mark.parametrize("name", ["API_RATE", "API_ANON_RATE"])
@pytest.mark.parametrize(
    "raw", ["lots", "1200", "1200/fortnight", "-5/min", "ten/min", "0/min", "000/s"]
)
def test_a_rate_setting_that_is_not_a_rate_refuses_to_start(tmp_path, name, raw):
    stderr = settings_refused(tmp_path, **{f"RECONCILE_{name}": raw})

    assert f"RECONCILE_{name} must be a rate" in stderr


@pytest.mark.parametrize(("raw", "rate"), [("5/s", "5/s"), (" 100/hour ", "100/hour")])
def test_a_rate_setting_takes_drfs_spellings(tmp_path, raw, rate):
    rates, _ = settings_loaded(tmp_path, RECONCILE_API_RATE=raw)

    assert rates["principal"] == rate


@pytest.mark.parametrize("raw", ["", "  "])
def test_the_fact_timezone_left_empty_keeps_utc(tmp_path, raw):
    # An empty RECONCILE_FACT_TIMEZONE reached ZoneInfo("") on every memory write and every
    # facts/{key}/current: each answered 500 internal_error.
    _, timezone = settings_loaded(tmp_path, RECONCILE_FACT_TIMEZONE=raw)

    assert timezone == "UTC"


def test_a_fact_timezone_that_is_no_timezone_refuses_to_start(tmp_path):
    stderr = settings_refused(tmp_path, RECONCILE_FACT_TIMEZONE="Mars/Olympus_Mons")

    assert "RECONCILE_FACT_TIMEZONE must be an IANA timezone" in stderr


def test_the_fact_timezone_takes_an_iana_name(tmp_path):
    _, timezone = settings_loaded(tmp_path, RECONCILE_FACT_TIMEZONE=" Europe/London ")

    assert timezone == "Europe/London"


def test_string_settings_left_empty_keep_their_defaults(tmp_path, monkeypatch):
    # `RECONCILE_VAR_DIR=` put the database and broker in the current directory, and
    # `RECONCILE_FALLBACK_OWNER=` routed escalations with no owner to "".
    monkeypatch.chdir(tmp_path)
    _, _, var_dir, owner, database = settings_read(
        tmp_path, RECONCILE_VAR_DIR=" ", RECONCILE_SQLITE_PATH="", RECONCILE_FALLBACK_OWNER=""
    )

    assert var_dir.endswith("/var") and var_dir != str(tmp_path / "var")
    assert owner == "platform-operations"
    assert database == f"{var_dir}/reconcile.sqlite3"


@pytest.mark.parametrize(
    ("name", "raw", "message"),
    [
        ("LOGIN_FAILURE_LIMIT", "-1", "at least 1"),
        ("API_KEY_FAILURE_LIMIT", "0", "at least 1"),
        ("MAX_BODY_BYTES", "0", "at least 1024"),
        ("OWNER_TASK_SOFT_TIME_LIMIT", "3600", "at most 3540"),
        # A period of 0 (or less) made each scheduled sweep expire as it was sent (`expires`
        # is ten periods): the effects and bulk-job sweeps, or memory expiry, never ran.
        ("SWEEP_EFFECTS_EVERY_SECONDS", "0", "at least 1"),
        ("EXPIRE_MEMORIES_EVERY_SECONDS", "-5", "at least 1"),
        # The http adapter's default timeout: every owner read failed closed (0: at once;
        # below 0, httpx's ValueError logged as an adapter error on each read and commit).
        ("HTTP_TIMEOUT_MS", "0", "at least 1"),
        ("HTTP_TIMEOUT_MS", "-5", "at least 1"),
    ],
)
def test_a_number_outside_its_bounds_refuses_to_start(tmp_path, name, raw, message):
    stderr = settings_refused(tmp_path, **{f"RECONCILE_{name}": raw})

    assert f"RECONCILE_{name} must be {message}" in stderr


def test_a_negative_hsts_max_age_refuses_to_start_in_production(tmp_path):
    stderr = settings_refused(
        tmp_path,
        RECONCILE_PRODUCTION="1",
        RECONCILE_SECRET_KEY="x9Qe2Lr7Tz4Wb1Ny8Kc5Vm3Hd6Jf0Gp-Uo_Ia",
        RECONCILE_ALLOWED_HOSTS="reconcile.example.org",
        RECONCILE_HSTS_SECONDS="-1",
    )

    assert "RECONCILE_HSTS_SECONDS must be at least 0" in stderr
