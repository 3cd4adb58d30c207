"""`bench http`'s server-side figures: read from the histogram files the server's workers
write, and summarised without inventing precision the buckets do not have."""

from __future__ import annotations

import math

import pytest

from config.http_metrics import BUCKETS
from drills_app.bench.server_time import (
    Histogram,
    server_histogram,
    server_served,
    server_time_row,
)
from tests.test_http_metrics import run_worker_process

INF = math.inf


def test_percentiles_are_the_bounds_of_the_buckets_that_hold_them():
    before = Histogram(((0.005, 10.0), (0.01, 10.0), (0.025, 10.0), (INF, 10.0)), 10.0, 0.03)
    after = Histogram(((0.005, 60.0), (0.01, 108.0), (0.025, 109.0), (INF, 110.0)), 110.0, 0.9)

    window = after.since(before)

    assert window.count == 100
    assert window.mean_ms == pytest.approx(8.7)
    assert window.within_ms(0.5) == 5.0  # 50 of 100 within 5 ms
    assert window.within_ms(0.98) == 10.0
    assert window.within_ms(0.99) == 25.0
    assert window.within_ms(1.0) == INF  # the slowest is past the last bound


def test_an_empty_window_says_so_rather_than_zero():
    empty = Histogram((), 0.0, 0.0)

    assert (empty.mean_ms, empty.within_ms(0.99)) == (None, None)
    assert server_time_row("POST /api/v1/effects", empty).split()[-4:] == ["0", "-", "-", "-"]


def test_the_servers_histogram_adds_up_its_workers_files(tmp_path, db):
    directory = tmp_path / "prometheus"
    directory.mkdir()
    run_worker_process(directory, tmp_path / "var-a", 2)  # before the window: not counted
    with server_served(directory, "/healthz", "GET") as served:
        run_worker_process(directory, tmp_path / "var-b", 3)

    window = served.histogram
    assert server_histogram(directory, "/healthz", "GET").count == 2 + 3  # both files
    assert window.count == 3
    assert window.mean_ms is not None and window.mean_ms > 0
    assert window.within_ms(0.99) in {bound * 1000 for bound in BUCKETS} | {INF}
    assert server_histogram(directory, "/healthz", "POST").count == 0  # another method
