"""The web stream, as `./dev up` and `./dev serve` start gunicorn: every line gunicorn writes
(its own and its access log) is one JSON object, as the application's are."""

from __future__ import annotations

import json
import os
import socket
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
            # Then, on the same (only) worker, a request gunicorn refuses before the
            # application sees it: its line must not carry the request before's id.
            with socket.create_connection(("127.0.0.1", port), timeout=5) as refused:
                refused.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n")
                assert refused.recv(100).startswith(b"HTTP/1.1 400")
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
    # A line written after a request was answered (a request gunicorn refuses, the worker
    # exiting) is no longer that request's: it names neither its id nor its principal.
    after = [
        entry
        for entry in entries
        if entry["message"].startswith(("Invalid request", "Worker exiting"))
    ]
    assert len(after) == 2, entries
    assert [(entry["request_id"], entry["principal"]) for entry in after] == [("", "")] * 2
