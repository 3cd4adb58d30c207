"""A full disk under PROMETHEUS_MULTIPROC_DIR never kills a web worker (config/metric_files.py).

Live, with the var directory on a full tmpfs: prometheus_client's mapped metric file was
extended sparsely, the first write into an unallocated page was a SIGBUS, and every gunicorn
worker (and each one booted to replace it) died; agents' connections were reset.
"""

from __future__ import annotations

import errno
import os

from django.test import Client
from prometheus_client import mmap_dict

from config import http_metrics
from config.metric_files import AllocatedMmapedDict
from tests.test_http_metrics import run_worker_process


def allocated(path: os.PathLike[str] | str) -> bool:
    """Every byte of the file has a block behind it (no hole a mapping could fault on)."""
    status = os.stat(path)
    return status.st_blocks * 512 >= status.st_size > 0


def test_a_workers_metric_file_is_allocated_not_sparse(db, tmp_path):
    multiproc_dir = tmp_path / "prometheus"
    multiproc_dir.mkdir()
    run_worker_process(multiproc_dir, tmp_path / "var", 2)
    [histogram] = multiproc_dir.glob("histogram_*.db")
    assert allocated(histogram)


def test_a_growing_metric_file_is_allocated_before_it_is_written(tmp_path):
    path = tmp_path / "histogram_1.db"
    values = AllocatedMmapedDict(str(path))
    try:
        # Past the first megabyte: the file doubles, and the new half is allocated first.
        for number in range(12_000):
            values.write_value(f"series-{number}-{'x' * 64}", 1.0, 0.0)
        assert os.stat(path).st_size > mmap_dict._INITIAL_MMAP_SIZE
        assert allocated(path)
    finally:
        values.close()


def test_no_room_for_a_metric_file_is_an_error_not_a_signal(tmp_path, monkeypatch):
    def disk_full(descriptor: int, offset: int, length: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", disk_full)
    try:
        AllocatedMmapedDict(str(tmp_path / "histogram_2.db"))
    except OSError as error:
        assert error.errno == errno.ENOSPC
    else:
        raise AssertionError("a file with no room behind it was mapped")


def test_a_request_whose_series_has_no_room_is_answered_all_the_same(db, monkeypatch):
    def disk_full(*labels: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(http_metrics.request_duration, "labels", disk_full)
    # A route this process has not counted yet, so its series is created now.
    response = Client().get("/api/v1/no-such-route-for-metrics")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"


def test_a_full_disk_is_logged_once_a_minute_not_at_every_request(db, monkeypatch, caplog):
    """Each request with a new series logged a warning and a traceback while the disk was
    full: hundreds a second under load, into the log on the same full disk."""

    def disk_full(*labels: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    clock = [1000.0]
    monkeypatch.setattr(http_metrics.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(http_metrics.request_duration, "labels", disk_full)
    client = Client()
    with caplog.at_level("WARNING", logger="config.http_metrics"):
        for _ in range(5):
            client.get("/api/v1/no-such-route-for-metrics")
        clock[0] += 61
        client.get("/api/v1/no-such-route-for-metrics")
        # Another episode, after a quiet minute: said as a first failure, with its traceback.
        clock[0] += 120
        client.get("/api/v1/no-such-route-for-metrics")
    lines = [record for record in caplog.records if record.name == "config.http_metrics"]
    assert len(lines) == 3
    assert lines[0].exc_info is not None
    assert (
        lines[1].getMessage().startswith("5 more requests not counted in /metrics in the last 61 s")
    )
    assert lines[1].exc_info is None
    assert lines[2].getMessage() == "request not counted in /metrics: no room for it"
    assert lines[2].exc_info is not None
