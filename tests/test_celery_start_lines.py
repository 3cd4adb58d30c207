"""A worker and the scheduler, started as ./dev starts them (`celery --quiet` with JSON logs),
write nothing but JSON lines as they start: Celery's plain-text banners are replaced by one
line each (config/celery.py), and Python's warnings are log records (config/logs.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings

CELERY = Path(sys.executable).with_name("celery")


def _isolated_env(var_dir: Path) -> dict[str, str]:
    """The embedded default in a folder of its own: whichever database and broker the suite
    runs on, this worker consumes nothing of theirs."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("RECONCILE_") and name not in ("DATABASE_URL", "CELERY_BROKER_URL")
    }
    return {**env, "RECONCILE_VAR_DIR": str(var_dir), "RECONCILE_LOG_FORMAT": "json"}


def _children(pid: int) -> list[int]:
    found = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [int(child) for child in found]


def _start_lines(
    tmp_path: Path, command: list[str], until: str, then_kill_pool_until: str = ""
) -> list[str]:
    log = tmp_path / f"{command[0]}.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [str(CELERY), "-A", "config", "--quiet", *command],
            cwd=settings.BASE_DIR,
            env=_isolated_env(tmp_path / "var"),
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 60
        while until not in log.read_text(errors="replace"):
            assert process.poll() is None, log.read_text(errors="replace")
            assert time.monotonic() < deadline, log.read_text(errors="replace")
            time.sleep(0.2)
        if then_kill_pool_until:
            for child in _children(process.pid):
                os.kill(child, 9)
            while then_kill_pool_until not in log.read_text(errors="replace"):
                assert time.monotonic() < deadline, log.read_text(errors="replace")
                time.sleep(0.2)
        return [line for line in log.read_text().splitlines() if line.strip()]
    finally:
        os.killpg(process.pid, 9)
        process.wait(10)


def _parsed(lines: list[str]) -> list[dict]:
    parsed = []
    for line in lines:
        try:
            parsed.append(json.loads(line))
        except json.JSONDecodeError:
            raise AssertionError(f"not a JSON line: {line!r}") from None
    return parsed


def test_a_quiet_worker_starts_in_json_lines_and_says_what_its_banner_said(tmp_path):
    lines = _start_lines(
        tmp_path,
        ["worker", "-l", "info", "--concurrency", "1", "-n", "start-lines@%h"],
        until="ready.",
    )
    started = [e for e in _parsed(lines) if e["logger"] == "config.celery"]
    assert len(started) == 1
    message = started[0]["message"]
    assert "start-lines@" in message and "concurrency 1" in message
    assert "queues corrections, default, drills, readbacks" in message


def test_a_quiet_scheduler_starts_in_json_lines(tmp_path):
    lines = _start_lines(
        tmp_path,
        ["beat", "-l", "info", "-s", str(tmp_path / "schedule"), "--pidfile", ""],
        until="scheduler started",
    )
    started = [e for e in _parsed(lines) if e["logger"] == "config.celery"]
    assert started[0]["message"].startswith("scheduler started: ")


def test_a_pool_process_killed_is_said_in_a_json_line(tmp_path):
    """The pool's own messages (billiard's `multiprocessing` logger, to which Celery gives a
    plain-text handler of its own): a pool process killed (the OOM killer) is what an
    operator alerts on."""
    lines = _start_lines(
        tmp_path,
        ["worker", "-l", "info", "--concurrency", "1", "-n", "pool-lines@%h"],
        until="ready.",
        then_kill_pool_until="exited with",
    )
    killed = [e for e in _parsed(lines) if "exited with" in e["message"]]
    assert killed[0]["level"] == "ERROR" and killed[0]["logger"] == "multiprocessing"


def test_a_worker_and_beat_refused_at_start_say_why_in_one_json_line(tmp_path):
    """A setting refused before Django configures logging (production without a secret) went
    to Python's own hook: some forty lines of plain traceback per process."""
    env = {**_isolated_env(tmp_path / "var"), "RECONCILE_PRODUCTION": "1"}
    for command in (["worker", "-n", "refused@%h"], ["beat", "-s", str(tmp_path / "schedule")]):
        finished = subprocess.run(
            [str(CELERY), "-A", "config", "--quiet", *command],
            cwd=settings.BASE_DIR,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert finished.returncode != 0
        (line,) = _parsed([line for line in finished.stderr.splitlines() if line.strip()])
        assert line["level"] == "CRITICAL"
        assert "RECONCILE_SECRET_KEY" in line["message"]
        assert "ImproperlyConfigured" in line["exception"]


def test_an_error_typed_into_celery_shell_is_no_process_stopped_line(tmp_path):
    """The start-up hook is the worker's and beat's: `celery shell` hands an error typed at
    its prompt to sys.excepthook, which said CRITICAL "process stopped" of a live shell."""
    finished = subprocess.run(
        [str(CELERY), "-A", "config", "shell", "--python"],
        cwd=settings.BASE_DIR,
        env=_isolated_env(tmp_path / "var"),
        input="undefined_name\nprint('still here')\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "still here" in finished.stdout
    assert "NameError: name 'undefined_name' is not defined" in finished.stderr
    assert "config.startup" not in finished.stderr
