"""The embedded default's file cache counts every increment, from any number of processes.

Django's file cache reads a counter and writes it back unlocked: two processes counting at
once kept 548 of 1,000 counts, so the API throttle admitted about twice an agent's rate and
the failure counters about twice the failures before a lockout.
"""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

import pytest

from config.file_cache import FileCache
from reconcile_app.security import (
    _counter_decrement,
    _counter_increment,
    _window_counts,
    failure_count,
    failure_record,
)

PROCESSES, EACH = 3, 200


def cache_in(directory: Path) -> FileCache:
    return FileCache(str(directory), {"TIMEOUT": 300})


def count_windows(directory: str, times: int) -> None:
    cache = cache_in(Path(directory))
    for _ in range(times):
        _window_counts(cache, "throttle:7:100", "throttle:7:99", lifetime=120)


def count_failures(directory: str, times: int) -> None:
    cache = cache_in(Path(directory))
    for _ in range(times):
        _counter_increment(cache, "failures:login:alice", lifetime=900)
    for _ in range(times // 4):
        _counter_decrement(cache, "failures:login:alice", lifetime=900)


@pytest.mark.parametrize("work", [count_windows, count_failures])
def test_processes_counting_at_once_lose_no_count(tmp_path, work):
    # Forked, as gunicorn's workers are: each its own process, one directory between them.
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=work, args=(str(tmp_path), EACH)) for _ in range(PROCESSES)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert [worker.exitcode for worker in workers] == [0] * PROCESSES

    cache = cache_in(tmp_path)
    if work is count_windows:
        assert cache.get("throttle:7:100") == PROCESSES * EACH
    else:
        assert cache.get("failures:login:alice") == PROCESSES * (EACH - EACH // 4)


def test_a_counter_keeps_its_lifetime_when_it_changes(tmp_path, monkeypatch):
    now = [1_000_000.0]
    monkeypatch.setattr(time, "time", lambda: now[0])
    cache = cache_in(tmp_path)

    assert cache.count_window("window:2", "window:1", 120) == (1, 0)
    now[0] += 100
    assert cache.count_window("window:2", "window:1", 120) == (2, 0)
    assert cache.incr("window:2") == 3
    assert cache.decr("window:2") == 2
    now[0] += 21  # 121 s after the window's first count, however often it changed since
    assert cache.get("window:2") is None
    assert cache.count_window("window:3", "window:2", 120) == (1, 0)


def test_add_incr_and_touch_keep_the_caches_contract(tmp_path, monkeypatch):
    now = [1_000_000.0]
    monkeypatch.setattr(time, "time", lambda: now[0])
    cache = cache_in(tmp_path)

    with pytest.raises(ValueError):
        cache.incr("missing")
    assert cache.touch("missing", 60) is False
    assert cache.add("key", 1, 60) is True
    assert cache.add("key", 5, 60) is False  # present: left as it is
    assert cache.incr("key", 4) == 5
    assert cache.touch("key", 600) is True
    now[0] += 300
    assert cache.get("key") == 5  # touched to ten minutes
    now[0] += 301
    assert cache.get("key") is None
    assert cache.add("key", 1, 60) is True  # expired: added afresh
    cache.clear()
    assert cache.get("key") is None and (tmp_path / "locks").is_dir()


def test_the_previous_window_reads_zero_until_it_has_counted(tmp_path):
    cache = cache_in(tmp_path)
    for _ in range(3):
        cache.count_window("w:1", "w:0", 120)

    assert cache.count_window("w:2", "w:1", 120) == (1, 3)


def test_a_full_cache_drops_expired_entries_before_any_live_counter(tmp_path, monkeypatch):
    now = [1_000_000.0]
    monkeypatch.setattr(time, "time", lambda: now[0])
    cache = FileCache(str(tmp_path), {"TIMEOUT": 300, "OPTIONS": {"MAX_ENTRIES": 11}})
    for _ in range(3):
        cache.count_window("failures:alice", "none", 900)  # the counter a lockout reads
    for name in range(10):
        cache.count_window(f"failures:stranger-{name}", "none", 60)
    now[0] += 61  # the strangers' counters have expired; alice's has not

    cache.count_window("failures:mallory", "none", 60)  # a first write: the cache is full

    assert cache.get("failures:alice") == 3
    assert len(list(tmp_path.glob("*.djcache"))) == 2


def test_a_full_cache_of_live_entries_is_culled_as_djangos_is(tmp_path):
    cache = FileCache(str(tmp_path), {"OPTIONS": {"MAX_ENTRIES": 9, "CULL_FREQUENCY": 3}})
    for name in range(9):
        cache.set(f"live-{name}", name, 600)

    cache.add("one-more", 1, 600)

    assert len(list(tmp_path.glob("*.djcache"))) == 9 - 3 + 1


def test_the_embedded_default_keeps_ten_thousand_entries(settings):
    from config.cache import cache_settings

    configured = cache_settings(cache_url="", broker_url="filesystem://", var_dir=Path("/v"))
    assert configured["default"]["OPTIONS"] == {"MAX_ENTRIES": 10_000}


def fill_with_new_counters(directory: str, prefix: str) -> None:
    cache = FileCache(directory, {"OPTIONS": {"MAX_ENTRIES": 40}})
    for name in range(400):  # every one a first write into a full cache: a culling each
        cache.count_window(f"{prefix}-{name}", "none", 600)


def test_processes_culling_a_full_cache_wait_on_no_lock_they_hold(tmp_path):
    context = multiprocessing.get_context("fork")
    workers = [
        context.Process(target=fill_with_new_counters, args=(str(tmp_path), prefix))
        for prefix in ("a", "b")
    ]
    for worker in workers:
        worker.start()
    deadline = time.monotonic() + 60
    for worker in workers:
        worker.join(timeout=max(0.0, deadline - time.monotonic()))
    stuck = [worker for worker in workers if worker.is_alive()]
    for worker in stuck:
        worker.kill()

    assert not stuck and [worker.exitcode for worker in workers] == [0, 0]
    # Each process's last first write may have seen 39 files and not culled.
    assert len(list(tmp_path.glob("*.djcache"))) <= 41


def record_failures(times: int) -> None:
    for _ in range(times):
        failure_record("login", "alice")


def test_sign_in_failures_at_once_are_all_counted(tmp_path, settings):
    # The lockout's own path: its first failure used to `set` the counter, unlocked, over
    # whatever the other processes had counted meanwhile.
    settings.CACHES = {"default": {"BACKEND": "config.file_cache.FileCache",
                                   "LOCATION": str(tmp_path)}}  # fmt: skip
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=record_failures, args=(50,)) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)

    assert [worker.exitcode for worker in workers] == [0] * 4
    assert failure_count("login", "alice") == 200


def test_a_half_written_entry_reads_as_missing_and_counts_afresh(tmp_path):
    cache = cache_in(tmp_path)
    cache.count_window("w:1", "w:0", 120)
    (entry,) = tmp_path.glob("*.djcache")
    entry.write_bytes(entry.read_bytes()[:7])  # the process writing it was killed

    assert cache.get("w:1", "gone") == "gone"
    with pytest.raises(ValueError):
        cache.incr("w:1")
    assert cache.count_window("w:1", "w:0", 120) == (1, 0)


def test_a_deleted_counter_stays_deleted(tmp_path):
    cache = cache_in(tmp_path)
    cache.add("failures:login:alice", 4, 900)

    assert cache.delete("failures:login:alice") is True
    with pytest.raises(ValueError):
        cache.incr("failures:login:alice")  # not brought back by a late failure
    assert cache.delete("failures:login:alice") is False


def test_no_other_user_may_open_the_lock_files(tmp_path):
    cache = cache_in(tmp_path / "cache")
    cache.set("key", 1, 60)

    assert (tmp_path / "cache" / "locks").stat().st_mode & 0o777 == 0o700
    assert {path.stat().st_mode & 0o777 for path in (tmp_path / "cache" / "locks").iterdir()} == {
        0o600
    }
