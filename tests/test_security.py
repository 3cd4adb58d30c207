"""Security by default: headers, CSP, throttles, production settings, static analysis."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.cache import cache
from django.test import Client

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def clean_counters():
    cache.clear()
    yield
    cache.clear()


def test_console_pages_carry_a_strict_content_security_policy(client, db):
    response = client.get("/accounts/login/")
    policy = response["Content-Security-Policy"]
    assert "default-src 'self'" in policy
    assert "script-src 'self' 'nonce-" in policy
    assert "frame-ancestors 'none'" in policy
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"


def test_what_is_read_signed_in_is_kept_by_no_cache(client, operator, agent):
    """The back button on a shared workstation showed audit pages after signing out: pages
    and API answers to a signed-in person or a key say `no-store`; answers that set their own
    caching (static files, the health checks) keep it."""
    client.force_login(operator.user)
    for path in ("/", "/audit/"):
        assert_private_no_store(client.get(path))
    assert_private_no_store(agent.get("/api/v1/me"))
    assert_private_no_store(agent.get("/api/v1/snapshots/snap_nothing"))  # a 404 too
    assert_private_no_store(Client().get("/api/v1/me", HTTP_AUTHORIZATION="Bearer rk_wrong"))
    health = client.get("/healthz")
    assert "no-cache" in health["Cache-Control"] and "no-store" in health["Cache-Control"]


def assert_private_no_store(response) -> None:
    directives = {part.strip() for part in response["Cache-Control"].split(",")}
    assert {"private", "no-store"} <= directives, response["Cache-Control"]


def test_api_docs_need_no_inline_script(client, db):
    page = client.get("/api/docs/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "<script>" not in html  # the initialiser is a same-origin script (CSP-safe)
    script = client.get("/api/docs/?script=")
    assert script.status_code == 200


def test_repeated_failed_sign_ins_are_throttled(client, operator):
    for _ in range(5):
        client.post("/accounts/login/", {"username": operator.name, "password": "wrong"})
    response = client.post(
        "/accounts/login/", {"username": operator.name, "password": "correct-horse-battery"}
    )
    assert response.status_code == 200  # the form again, not a redirect
    assert "Too many failed sign-ins" in response.content.decode()


def test_a_good_sign_in_clears_the_failures(client, operator):
    for _ in range(3):
        client.post("/accounts/login/", {"username": operator.name, "password": "wrong"})
    ok = client.post(
        "/accounts/login/", {"username": operator.name, "password": "correct-horse-battery"}
    )
    assert ok.status_code == 302


def test_guessing_api_keys_is_cut_off(client, agent, settings):
    """Guesses from one address end in 429; a valid key from that address still works.

    One proxy or NAT is one address for many agents: someone else's bad guesses must not
    lock them out.
    """
    settings.RECONCILE_FAILURE_LIMITS = {"login": 5, "api_key": 3}
    for _ in range(3):
        response = client.get("/api/v1/snapshots", HTTP_AUTHORIZATION="Bearer rk_bad_guess")
        assert response.status_code == 401
        assert response.json()["code"] == "authentication_failed"
    blocked = client.get("/api/v1/snapshots", HTTP_AUTHORIZATION="Bearer rk_bad_guess")
    assert blocked.status_code == 429
    assert blocked.json()["code"] == "throttled"
    assert int(blocked["Retry-After"]) > 0
    valid = client.get("/api/v1/snapshots", HTTP_AUTHORIZATION=f"Bearer {agent.key}")
    assert valid.status_code == 200
    again = client.get("/api/v1/snapshots", HTTP_AUTHORIZATION="Bearer rk_bad_guess")
    assert again.status_code == 429


def test_the_key_guessing_refusal_reads_as_two_sentences(db, client, settings):
    # DRF appends "Expected available in N seconds." to the detail it is given: without a
    # full stop of its own the answer read "…from this address Expected available in 900…".
    settings.RECONCILE_FAILURE_LIMITS = {"login": 5, "api_key": 1}
    for _ in range(2):
        blocked = client.get("/api/v1/snapshots", HTTP_AUTHORIZATION="Bearer rk_bad_guess")

    assert blocked.status_code == 429
    assert blocked.json()["detail"].startswith(
        "too many invalid keys from this address. Expected available in "
    )


def test_a_revoked_key_counts_as_a_guess(client, agent, settings):
    from django.utils import timezone

    from reconcile_app.models import ApiKey

    settings.RECONCILE_FAILURE_LIMITS = {"login": 5, "api_key": 1}
    ApiKey.objects.filter(principal=agent.principal).update(revoked_at=timezone.now())
    statuses = [
        client.get("/api/v1/snapshots", HTTP_AUTHORIZATION=f"Bearer {agent.key}").status_code
        for _ in range(2)
    ]
    assert statuses == [401, 429]


def test_forged_forwarded_for_does_not_spread_key_guesses(client, db, settings):
    """No trusted proxy (the default): every guess counts on the socket's address."""
    settings.RECONCILE_FAILURE_LIMITS = {"login": 5, "api_key": 3}
    statuses = [
        client.get(
            "/api/v1/snapshots",
            HTTP_AUTHORIZATION="Bearer rk_bad_guess",
            HTTP_X_FORWARDED_FOR=f"198.51.100.{number}",
        ).status_code
        for number in range(4)
    ]
    assert statuses == [401, 401, 401, 429]


def test_behind_one_trusted_proxy_key_guesses_count_on_the_last_hop(client, db, settings):
    settings.RECONCILE_FAILURE_LIMITS = {"login": 5, "api_key": 3}
    settings.RECONCILE_TRUSTED_PROXY_COUNT = 1

    def guess(forwarded_for: str) -> int:
        return client.get(
            "/api/v1/snapshots",
            HTTP_AUTHORIZATION="Bearer rk_bad_guess",
            HTTP_X_FORWARDED_FOR=forwarded_for,
        ).status_code

    assert [guess(f"10.0.0.{n}, 203.0.113.5") for n in range(4)] == [401, 401, 401, 429]
    assert guess("203.0.113.5, 198.51.100.7") == 401


def test_api_requests_are_rate_limited_per_principal(agent, settings):
    from rest_framework.settings import api_settings

    from reconcile_app.security import PrincipalRateThrottle

    rates = {**api_settings.DEFAULT_THROTTLE_RATES, "principal": "3/min"}
    original = PrincipalRateThrottle.THROTTLE_RATES
    PrincipalRateThrottle.THROTTLE_RATES = rates
    try:
        statuses = [agent.client.get("/api/v1/snapshots").status_code for _ in range(4)]
    finally:
        PrincipalRateThrottle.THROTTLE_RATES = original
    assert statuses == [200, 200, 200, 429]


def test_the_open_schema_is_rate_limited_per_address_at_the_anonymous_rate(client, db, monkeypatch):
    from rest_framework.settings import api_settings

    from reconcile_app.security import PrincipalRateThrottle

    rates = {**api_settings.DEFAULT_THROTTLE_RATES, "anon": "2/min", "principal": "100/min"}
    monkeypatch.setattr(PrincipalRateThrottle, "THROTTLE_RATES", rates)

    statuses = [client.get("/api/schema/?format=json").status_code for _ in range(3)]

    assert statuses == [200, 200, 429]


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def _production(tmp_path: Path, **overrides: str) -> dict[str, str]:
    """A production deployment's environment, sound unless `overrides` say otherwise."""
    return {
        **os.environ,
        "RECONCILE_PRODUCTION": "1",
        "RECONCILE_DEBUG": "0",
        "RECONCILE_SECRET_KEY": secrets.token_urlsafe(50),
        "RECONCILE_ALLOWED_HOSTS": "reconcile.example.org",
        "RECONCILE_VAR_DIR": str(tmp_path),
        **overrides,
    }


def test_check_deploy_is_clean_under_production_settings(tmp_path):
    env = _production(tmp_path)
    result = _run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"], env
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_production_refuses_insecure_defaults(tmp_path):
    env = {**os.environ, "RECONCILE_PRODUCTION": "1", "RECONCILE_VAR_DIR": str(tmp_path)}
    env.pop("RECONCILE_SECRET_KEY", None)
    result = _run([sys.executable, "manage.py", "check"], env)
    assert result.returncode != 0
    assert "RECONCILE_SECRET_KEY" in result.stderr


@pytest.mark.parametrize(
    ("setting", "value", "named"),
    [
        ("RECONCILE_SECRET_KEY", "a" * 40, "RECONCILE_SECRET_KEY"),  # long, and made up
        ("RECONCILE_ALLOWED_HOSTS", "*", "RECONCILE_ALLOWED_HOSTS"),
    ],
)
def test_production_refuses_a_made_up_key_and_any_host(tmp_path, setting, value, named):
    result = _run([sys.executable, "manage.py", "check"], _production(tmp_path, **{setting: value}))
    assert result.returncode != 0
    assert named in result.stderr


def test_a_log_level_in_lower_case_is_taken_and_an_unknown_one_named(tmp_path):
    env = {**os.environ, "RECONCILE_VAR_DIR": str(tmp_path)}
    for level in ("debug", "WARN", "fatal"):  # the names logging takes, in any case
        env["RECONCILE_LOG_LEVEL"] = level
        assert _run([sys.executable, "manage.py", "check"], env).returncode == 0, level
    env["RECONCILE_LOG_LEVEL"] = "chatty"
    result = _run([sys.executable, "manage.py", "check"], env)
    assert result.returncode != 0
    assert "RECONCILE_LOG_LEVEL is 'chatty'" in result.stderr


def test_a_log_format_in_any_case_is_taken_and_an_unknown_one_named(tmp_path):
    env = {**os.environ, "RECONCILE_VAR_DIR": str(tmp_path)}
    for log_format in ("json", "TEXT"):
        env["RECONCILE_LOG_FORMAT"] = log_format
        assert _run([sys.executable, "manage.py", "check"], env).returncode == 0, log_format
    env["RECONCILE_LOG_FORMAT"] = "txt"  # was taken, silently, as JSON
    result = _run([sys.executable, "manage.py", "check"], env)
    assert result.returncode != 0
    assert "RECONCILE_LOG_FORMAT is 'txt'" in result.stderr


def test_log_settings_left_empty_keep_their_defaults(tmp_path):
    """`RECONCILE_LOG_FORMAT=` (a compose file passing an unset variable on) is unset, as an
    empty boolean or number is: it refused to start ("RECONCILE_LOG_FORMAT is ''"), where
    ./dev, reading the same variable, took JSON."""
    env = {**os.environ, "RECONCILE_VAR_DIR": str(tmp_path)}
    env.update(RECONCILE_LOG_FORMAT="", RECONCILE_LOG_LEVEL=" ")
    result = _run([sys.executable, "manage.py", "check"], env)
    assert result.returncode == 0, result.stderr


def test_a_negative_trusted_proxy_count_refuses_to_start(tmp_path):
    env = {**os.environ, "RECONCILE_TRUSTED_PROXY_COUNT": "-1", "RECONCILE_VAR_DIR": str(tmp_path)}
    result = _run([sys.executable, "manage.py", "check"], env)
    assert result.returncode != 0
    assert "RECONCILE_TRUSTED_PROXY_COUNT" in result.stderr


def test_an_empty_source_token_prefix_refuses_to_start(tmp_path):
    """An empty prefix would let a source file name any variable as an owner's token."""
    env = {
        **os.environ,
        "RECONCILE_SOURCE_TOKEN_ENV_PREFIX": "",
        "RECONCILE_VAR_DIR": str(tmp_path),
    }
    result = _run([sys.executable, "manage.py", "check"], env)
    assert result.returncode != 0
    assert "RECONCILE_SOURCE_TOKEN_ENV_PREFIX" in result.stderr


@pytest.mark.skipif(
    shutil.which("bandit", path=str(Path(sys.executable).parent)) is None,
    reason="bandit is installed with the dev extras",
)
def test_bandit_reports_no_medium_or_high_finding():
    bandit = str(Path(sys.executable).parent / "bandit")
    result = _run(
        [
            bandit,
            "-q",
            "-r",
            "reconcile_app",
            "lineage_app",
            "config",
            "-ll",
            "-x",
            "reconcile_app/migrations,lineage_app/migrations",
        ],
        dict(os.environ),
    )
    assert result.returncode == 0, result.stdout
