"""The product's gunicorn, as `./dev serve` starts it (`-c config/gunicorn.py`), with one
worker, for tests that need the real server in front of the application."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings

from drills_app.bench.common import free_port

BASE_DIR = Path(settings.BASE_DIR)
GUNICORN = str(Path(sys.executable).parent / "gunicorn")


@contextmanager
def gunicorn_serving(var_dir: Path, **env: str) -> Iterator[int]:
    """Its port, once `/healthz` answers (or 30 s passed, or it exited: the caller's
    requests then fail on their own account); stopped on the way out."""
    port = free_port()
    command = [GUNICORN, "-c", "config/gunicorn.py", "config.wsgi", "--workers", "1"]
    server = subprocess.Popen(
        [*command, "--bind", f"127.0.0.1:{port}"],
        cwd=BASE_DIR,
        env={**os.environ, "RECONCILE_VAR_DIR": str(var_dir), **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and server.poll() is None:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5).read()
                break
            except OSError:
                time.sleep(0.2)
        yield port
    finally:
        server.terminate()
        server.wait(timeout=30)
