"""gunicorn opens no control socket: the product's web processes are managed by signals
(docs/deploy.md), and gunicorn 25's socket, at one path per user by default
(`$XDG_RUNTIME_DIR/gunicorn.ctl` or `~/.gunicorn/gunicorn.ctl`), was taken over by each master
started after another on the host (seen in three deployments' logs on one machine): `gunicornc`
would have stopped or scaled whichever master started last."""

from __future__ import annotations

import os
import subprocess
import time
import urllib.request

from drills_app.bench.common import free_port
from tests.test_gunicorn_logs import BASE_DIR, GUNICORN


def test_a_master_opens_no_control_socket(tmp_path):
    port = free_port()
    home, runtime = tmp_path / "home", tmp_path / "runtime"
    runtime.mkdir()
    env = {
        **os.environ,
        "RECONCILE_VAR_DIR": str(tmp_path / "var"),
        "HOME": str(home),
        "XDG_RUNTIME_DIR": str(runtime),
    }
    command = [GUNICORN, "-c", "config/gunicorn.py", "config.wsgi", "--workers", "1"]
    server = subprocess.Popen(
        [*command, "--bind", f"127.0.0.1:{port}"],
        cwd=BASE_DIR,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5).read()
                break
            except OSError:
                assert time.monotonic() < deadline, "gunicorn did not answer"
                time.sleep(0.2)
        time.sleep(1)  # the control server starts in a thread of the master

        assert not (runtime / "gunicorn.ctl").exists()
        assert not (home / ".gunicorn").exists()
    finally:
        server.terminate()
        server.wait(timeout=30)
