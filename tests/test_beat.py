"""A second scheduler is warned about (config/beat.py; docs/deploy.md, "The scheduler, exactly
once"): two `celery beat` on two hosts queue every sweep and expiry twice."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from celery.beat import Scheduler
from django.core.cache import cache

from config import beat
from config.celery import app


@pytest.fixture
def no_scheduler(monkeypatch) -> Iterator[None]:
    # Celery's own tick would send the due tasks to the broker: only the presence is tested.
    monkeypatch.setattr(Scheduler, "tick", lambda self, *args, **kwargs: 1.0)
    cache.delete(beat.SCHEDULER_KEY)
    yield
    cache.delete(beat.SCHEDULER_KEY)


def _scheduler(tmp_path, name: str) -> beat.ExclusiveScheduler:
    scheduler = beat.ExclusiveScheduler(app=app, schedule_filename=str(tmp_path / name), lazy=True)
    scheduler.presence.identity = name
    return scheduler


def _tick(scheduler: beat.ExclusiveScheduler) -> float:
    scheduler.presence_checked_at = float("-inf")  # as if CHECK_EVERY_SECONDS had passed
    return scheduler.tick()


def _warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "config.beat"]


def test_beat_runs_the_scheduler_that_warns():
    assert app.conf.beat_scheduler == "config.beat.ExclusiveScheduler"


def test_two_schedulers_each_warn_naming_the_other(tmp_path, no_scheduler, caplog):
    first, second = _scheduler(tmp_path, "web1:101:aa"), _scheduler(tmp_path, "web2:202:bb")
    with caplog.at_level(logging.WARNING, logger="config.beat"):
        assert _tick(first) == 1.0
        _tick(second)
        assert _warnings(caplog) == []  # each one's first tick only writes
        _tick(first)
        _tick(second)

    said = _warnings(caplog)
    assert len(said) == 2
    assert said[0].startswith("another scheduler is running: web2:202:bb (this one is web1")
    assert said[1].startswith("another scheduler is running: web1:101:aa (this one is web2")


def test_one_started_after_a_killed_one_does_not_warn(tmp_path, no_scheduler, caplog):
    # The killed scheduler's identity stays in the cache until it expires.
    _tick(_scheduler(tmp_path, "web1:101:aa"))
    restarted = _scheduler(tmp_path, "web1:177:cc")
    with caplog.at_level(logging.WARNING, logger="config.beat"):
        for _ in range(3):
            _tick(restarted)
    assert _warnings(caplog) == []
    assert cache.get(beat.SCHEDULER_KEY)["id"] == "web1:177:cc"


def test_between_checks_a_tick_asks_the_cache_nothing(tmp_path, no_scheduler, monkeypatch):
    scheduler = _scheduler(tmp_path, "web1:101:aa")
    _tick(scheduler)
    calls: list[str] = []
    monkeypatch.setattr(beat.SchedulerPresence, "check", lambda self: calls.append("check"))
    scheduler.tick()
    assert calls == []


def test_a_cache_out_of_reach_never_stops_scheduling(tmp_path, no_scheduler, monkeypatch):
    def broken(*args, **kwargs):
        raise ConnectionError("cache down")

    monkeypatch.setattr(cache, "get", broken)
    scheduler = _scheduler(tmp_path, "web1:101:aa")
    assert _tick(scheduler) == 1.0
    assert _tick(scheduler) == 1.0
