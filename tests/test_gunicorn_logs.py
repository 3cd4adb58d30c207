"""The web stream, as `./dev up` and `./dev serve` start gunicorn: every line gunicorn writes
(its own and its access log) is one JSON object, as the application's are."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from django.conf import settings

from drills_app.bench.common import free_port

BASE_DIR = Path(settings.BASE_DIR)
GUNICORN = str(Path(sys.executable).parent / "gunicorn")


def test_every_line_gunicorn_writes_is_one_json_object(tmp_path):
    port = free_port()
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    env = {**os.environ, "RECONCILE_VAR_DIR": str(tmp_path / "var")}
    command = [GUNICORN, "-c", "config/gunicorn.py", "config.wsgi", "--workers", "1"]
    logs = ["--access-logfile", "-", "--error-logfile", "-", "--bind", f"127.0.0.1:{port}"]
    with out.open("w") as stdout, err.open("w") as stderr:
        server = subprocess.Popen(
            [*command, *logs], cwd=BASE_DIR, env=env, stdout=stdout, stderr=stderr
        )
        try:
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/healthz", headers={"X-Request-ID": "req-gunicorn-1"}
            )
            deadline = time.monotonic() + 30
            while True:
                try:
                    urllib.request.urlopen(request, timeout=5).read()
                    break
                except OSError:
                    assert time.monotonic() < deadline, err.read_text()
                    time.sleep(0.2)
        finally:
            server.terminate()
            server.wait(timeout=30)

    lines = [line for line in (out.read_text() + err.read_text()).splitlines() if line]
    entries = [json.loads(line) for line in lines]  # any other line fails here
    loggers = {entry["logger"] for entry in entries}
    assert {"gunicorn.error", "gunicorn.access"} <= loggers
    access = [entry for entry in entries if entry["logger"] == "gunicorn.access"]
    assert access[-1]["request_id"] == "req-gunicorn-1"
    assert '"GET /healthz HTTP/1.1" 200' in access[-1]["message"]
