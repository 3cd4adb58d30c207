"""`./dev up --help` says what it runs and starts nothing; an unknown option is refused
before anything starts (as `./dev serve` does), rather than ignored."""

from __future__ import annotations

import socket
import subprocess

import pytest

from tests.test_dev_serve import BASE_DIR, DEV, dev_env


@pytest.fixture
def busy_port():
    """A port already taken: a `./dev up` that went on to start would stop there at once."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield str(taken.getsockname()[1])


def up(*args: str, port: str, var_dir: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [DEV, "up", *args],
        cwd=BASE_DIR,
        env=dev_env(RECONCILE_PORT=port, RECONCILE_VAR_DIR=var_dir),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_says_what_it_runs_and_starts_nothing(busy_port, tmp_path, flag):
    done = up(flag, port=busy_port, var_dir=str(tmp_path))
    assert (done.returncode, done.stderr) == (0, "")
    for named in ("RECONCILE_PORT", "RECONCILE_VAR_DIR", "RECONCILE_SIMULATE", "./dev serve"):
        assert named in done.stdout
    assert "in use" not in done.stdout and not (tmp_path / "log").exists()


def test_an_unknown_option_is_refused_before_anything_starts(busy_port, tmp_path):
    done = up("--port", "9000", port=busy_port, var_dir=str(tmp_path))
    assert done.returncode == 1
    assert "up: unknown option '--port'" in done.stderr
    assert "in use" not in done.stderr and not (tmp_path / "log").exists()
