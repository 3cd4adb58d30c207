"""Request latency on `/metrics` (config/http_metrics.py, config/gunicorn.py): a histogram by
route pattern, method and status, that grows with requests, keeps its labels bounded, and
adds up every worker process in multiprocess mode."""

from __future__ import annotations

import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

from django.conf import settings
from django.test import Client

from config.http_metrics import MULTIPROC_DIR_VARIABLE, PROCESS_REGISTRY, REQUEST_DURATION

BASE_DIR = Path(settings.BASE_DIR)


def observed(route: str, method: str = "GET", status: str = "200", le: str = "+Inf") -> float:
    """This process's count of requests in one bucket (0 when the series does not exist)."""
    value = PROCESS_REGISTRY.get_sample_value(
        f"{REQUEST_DURATION}_bucket",
        {"route": route, "method": method, "status": status, "le": le},
    )
    return value or 0.0


def scraped(text: str, route: str, status: str = "200") -> float:
    pattern = (
        rf'^{REQUEST_DURATION}_count\{{method="GET",route="{re.escape(route)}",'
        rf'status="{status}"\}} (\S+)$'
    )
    found = re.search(pattern, text, re.M)
    return float(found.group(1)) if found else 0.0


def test_each_request_lands_in_the_buckets_of_its_route(db):
    client = Client()
    before = observed("/healthz"), observed("/healthz", le="10.0")
    for _ in range(3):
        assert client.get("/healthz").status_code == 200
    assert observed("/healthz") == before[0] + 3
    # A health probe takes milliseconds, well inside the 10 s bucket.
    assert observed("/healthz", le="10.0") == before[1] + 3


def test_the_route_label_is_the_pattern_never_the_path(db, operator, auditor):
    before = observed("/api/v1/effects/<str:key>", status="404")
    for key in ("metrics-route-one", "metrics-route-two"):
        assert operator.client.get(f"/api/v1/effects/{key}").status_code == 404
    assert observed("/api/v1/effects/<str:key>", status="404") == before + 2
    text = auditor.client.get("/metrics").content.decode()
    assert scraped(text, "/api/v1/effects/<str:key>", status="404") == before + 2
    assert "metrics-route-one" not in text


def test_unmatched_paths_static_files_and_odd_methods_share_one_label_each(db):
    client = Client()
    unmatched = observed("<unmatched>", status="404")
    odd = observed("/healthz", method="other", status="405")
    for probe in ("/wp-login.php", "/.env", "/cgi-bin/probe-12345"):
        assert client.get(probe).status_code == 404
    assert client.generic("BREW", "/healthz").status_code == 405
    assert observed("<unmatched>", status="404") == unmatched + 3
    assert observed("/healthz", method="other", status="405") == odd + 1
    static_before = sum(observed("<static>", status=status) for status in ("200", "304", "404"))
    client.get(settings.STATIC_URL + "vendor/plotly.min.js")
    assert sum(observed("<static>", status=status) for status in ("200", "304", "404")) == (
        static_before + 1
    )


REQUESTS_FROM_A_WORKER = """
import django
django.setup()
from django.test import Client
client = Client()
for _ in range({count}):
    assert client.get("/healthz").status_code == 200
"""


def run_worker_process(multiproc_dir: Path, var_dir: Path, count: int) -> None:
    """A process standing in for one gunicorn worker: its own requests, its own file."""
    env = {
        **os.environ,
        MULTIPROC_DIR_VARIABLE: str(multiproc_dir),
        "RECONCILE_VAR_DIR": str(var_dir),
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    subprocess.run(
        [sys.executable, "-c", REQUESTS_FROM_A_WORKER.format(count=count)],
        cwd=BASE_DIR,
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )


def test_multiprocess_mode_adds_up_every_worker(db, auditor, tmp_path, monkeypatch):
    multiproc_dir = tmp_path / "prometheus"
    multiproc_dir.mkdir()
    run_worker_process(multiproc_dir, tmp_path / "var-a", 2)
    run_worker_process(multiproc_dir, tmp_path / "var-b", 3)
    assert len(list(multiproc_dir.glob("histogram_*.db"))) == 2

    # This process started without the variable: its counts stay in its memory, and a
    # multiprocess scrape reads the files alone.
    assert Client().get("/healthz").status_code == 200
    monkeypatch.setenv(MULTIPROC_DIR_VARIABLE, str(multiproc_dir))
    text = auditor.client.get("/metrics").content.decode()
    assert scraped(text, "/healthz") == 2 + 3


def test_the_gunicorn_master_removes_old_metric_files_and_sets_the_directory_for_its_workers(
    tmp_path, monkeypatch
):
    monkeypatch.delenv(MULTIPROC_DIR_VARIABLE, raising=False)
    monkeypatch.setenv("RECONCILE_VAR_DIR", str(tmp_path))
    config = runpy.run_path(str(BASE_DIR / "config" / "gunicorn.py"))
    directory = tmp_path / "prometheus"
    assert os.environ[MULTIPROC_DIR_VARIABLE] == str(directory)

    directory.mkdir()
    (directory / "histogram_4242.db").write_bytes(b"left by the last run")
    # Not the metrics' own: kept (the directory may be a shared or mounted one).
    (directory / "notes.txt").write_text("someone else's")
    config["on_starting"](None)
    assert directory.is_dir() and [path.name for path in directory.iterdir()] == ["notes.txt"]


def test_a_dead_worker_is_marked_so_its_live_gauges_go(tmp_path, monkeypatch):
    worker_pid = 4242
    monkeypatch.setenv(MULTIPROC_DIR_VARIABLE, str(tmp_path))
    live_gauge = tmp_path / f"gauge_livesum_{worker_pid}.db"
    live_gauge.write_bytes(b"")
    histogram = tmp_path / f"histogram_{worker_pid}.db"
    histogram.write_bytes(b"")
    config = runpy.run_path(str(BASE_DIR / "config" / "gunicorn.py"))

    class DeadWorker:
        pid = worker_pid

    config["child_exit"](None, DeadWorker())
    assert not live_gauge.exists()
    assert histogram.exists()  # counts already made stay counted
