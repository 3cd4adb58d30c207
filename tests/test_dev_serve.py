"""`./dev serve`: production settings on PostgreSQL and a broker, refused without them, and
a start that serves and a SIGTERM that leaves nothing running (README, docs/deploy.md)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from drills_app.bench.common import free_port
from drills_app.procfs import descendants
from tests.reconcile_app.effects.celery_workers import _test_database_url

BASE_DIR = Path(settings.BASE_DIR)
DEV = str(BASE_DIR / "dev")
SECRET = "serve-test-secret-" + "s" * 32
SERVICES = ("DATABASE_URL", "CELERY_BROKER_URL", "RECONCILE_SECRET_KEY")


def dev_env(**overrides: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in SERVICES}
    env.update(overrides)
    return env


def dev(*args: str, **overrides: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [DEV, *args],
        cwd=BASE_DIR,
        env=dev_env(**overrides),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def test_help_names_every_option():
    done = dev("serve", "--help")
    assert done.returncode == 0
    for option in ("--web N", "--workers M", "--bind HOST:PORT", "--no-beat"):
        assert option in done.stdout
    assert "RECONCILE_PRODUCTION=1" in done.stdout


@pytest.mark.parametrize(
    ("given", "named"),
    [
        ({}, "set DATABASE_URL and CELERY_BROKER_URL"),
        ({"DATABASE_URL": "postgres://db/reconcile"}, "set CELERY_BROKER_URL,"),
        ({"CELERY_BROKER_URL": "redis://redis:6379/0"}, "set DATABASE_URL,"),
    ],
)
def test_refused_without_the_database_or_the_broker(given, named):
    done = dev("serve", RECONCILE_SECRET_KEY=SECRET, **given)
    assert done.returncode == 1
    assert named in done.stderr
    assert "./dev up runs the embedded demo" in done.stderr
    assert "migrating" not in done.stdout


@pytest.mark.parametrize("secret", ["", "too-short"])
def test_refused_without_a_production_secret(secret):
    done = dev(
        "serve",
        DATABASE_URL="postgres://db/reconcile",
        CELERY_BROKER_URL="redis://redis:6379/0",
        RECONCILE_SECRET_KEY=secret,
    )
    assert done.returncode == 1
    assert "RECONCILE_SECRET_KEY" in done.stderr and "secrets.token_urlsafe" in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--web", "0"], "--web takes a number of processes from 1 to 999 (got '0')"),
        (["--workers", "many"], "--workers takes a number of processes"),
        (["--web"], "--web needs a number"),
        (["--bind", "8000"], "--bind takes HOST:PORT (got '8000')"),
        (["--daemon"], "unknown option '--daemon'"),
    ],
)
def test_bad_options_are_refused_before_anything_starts(args, message):
    done = dev("serve", *args)
    assert done.returncode == 1
    assert message in done.stderr


@pytest.mark.parametrize(
    ("family", "host"), [(socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")]
)
def test_an_address_in_use_is_refused_before_anything_starts(tmp_path, family, host):
    # `--bind HOST:PORT` takes an IPv6 address as gunicorn does, bracketed; the check that
    # the port is free used to fail on it with a traceback and let the start go on.
    with socket.socket(family) as taken:
        taken.bind((host, 0))
        taken.listen()
        port = taken.getsockname()[1]
        bind = f"[{host}]:{port}" if family == socket.AF_INET6 else f"{host}:{port}"
        done = dev(
            "serve",
            "--bind",
            bind,
            DATABASE_URL="postgres://db/reconcile",
            CELERY_BROKER_URL="redis://redis:6379/0",
            RECONCILE_SECRET_KEY=SECRET,
            RECONCILE_VAR_DIR=str(tmp_path),
        )
    assert done.returncode == 1
    assert f"{bind} is in use" in done.stderr
    assert "Traceback" not in done.stderr
    assert "migrating" not in done.stdout


# --- a real start and stop ----------------------------------------------------------------------


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[str]:
    """A memory-only Redis of this test's own: the suite's broker has other tests' tasks."""
    port = free_port()
    server = subprocess.Popen(
        [
            str(shutil.which("redis-server")),
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(tmp_path),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        server.terminate()
        server.wait(timeout=10)


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def get(url: str, **headers: str) -> tuple[int, str]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def wait_until(check, seconds: float, what: str, process: subprocess.Popen[bytes], log: Path):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        assert process.poll() is None, f"./dev serve exited early:\n{log.read_text()}"
        time.sleep(0.3)
    raise AssertionError(f"{what} within {seconds} s:\n{log.read_text()}")


@pytest.mark.skipif(connection.vendor != "postgresql", reason="serve runs on PostgreSQL")
@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server on PATH")
@pytest.mark.django_db(transaction=True)
def test_serves_with_production_settings_and_stops_on_sigterm(private_redis, tmp_path):
    started = time.monotonic()
    port = free_port()
    output = tmp_path / "serve.out"
    env = dev_env(
        DATABASE_URL=_test_database_url(),
        CELERY_BROKER_URL=private_redis,
        RECONCILE_SECRET_KEY=SECRET,
        RECONCILE_VAR_DIR=str(tmp_path / "var"),
        RECONCILE_SSL_REDIRECT="0",
        # The public name only, as docs/deploy.md has it: serve still probes 127.0.0.1.
        RECONCILE_ALLOWED_HOSTS="reconcile.example.org",
        RECONCILE_METRICS_TOKEN="serve-test-scrape-token",
        # Copies only: compressing plotly.js is test_staticfiles's business, not this one's.
        RECONCILE_STATICFILES_STORAGE="django.contrib.staticfiles.storage.StaticFilesStorage",
    )
    with output.open("wb") as out:
        serve = subprocess.Popen(
            [DEV, "serve", "--web", "2", "--workers", "1", "--bind", f"127.0.0.1:{port}"],
            cwd=BASE_DIR,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: "is running at" in output.read_text(), 60, "serving", serve, output)
        assert "(production settings)" in output.read_text()
        assert get(f"{url}/healthz")[0] == 200
        # The worker's heartbeat through the broker's Redis (the cache's default) makes
        # it ready: database, cache, broker and worker all answer.
        wait_until(lambda: get(f"{url}/readyz")[0] == 200, 30, "ready", serve, output)
        # Production settings: cookies are for HTTPS only (RECONCILE_SECURE_COOKIES).
        public = urllib.request.Request(
            f"{url}/accounts/login/", headers={"Host": "reconcile.example.org"}
        )
        with urllib.request.urlopen(public, timeout=5) as login:
            assert "; Secure" in login.headers["Set-Cookie"]
        assert get(f"{url}/accounts/login/")[0] == 400  # by its address: not a public name
        status, body = get(f"{url}/metrics", Authorization="Bearer serve-test-scrape-token")
        assert status == 200
        assert 'route="/healthz",status="200"' in body

        processes = descendants(serve.pid)
        commands = [Path(f"/proc/{pid}/cmdline").read_bytes() for pid in processes]
        assert sum(b"beat" in command for command in commands) == 1
        assert sum(b"gunicorn" in command for command in commands) == 1 + 2  # master, workers

        serve.send_signal(signal.SIGTERM)
        assert serve.wait(timeout=45) == 143
        assert [pid for pid in processes if running(pid)] == []
        assert "stopping web worker scheduler" in output.read_text()
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.wait()
    assert time.monotonic() - started < 90
