"""`/metrics` says how long ago the effects sweep ran: nothing else showed that scheduling had
stopped (beat down, or no worker on `readbacks`), while lost readbacks were never queued again
and quarantines and memories never expired."""

from __future__ import annotations

import re

from django.core.cache import cache
from redis.exceptions import ConnectionError as RedisConnectionError

from config.heartbeat import SWEEP_RAN_KEY
from reconcile_app.api import prometheus
from reconcile_app.tasks import effects_sweep_task

METRIC = re.compile(r"^reconcile_sweep_age_seconds (\S+)$", re.MULTILINE)


def sweep_age(auditor) -> str | None:
    response = auditor.client.get("/metrics")
    assert response.status_code == 200
    found = METRIC.search(response.content.decode())
    return found.group(1) if found else None


def test_the_scrape_says_how_long_ago_the_sweep_ran(db, auditor):
    cache.delete(SWEEP_RAN_KEY)
    # Never ran (scheduling never started, or the cache lost the record): +Inf, which the
    # documented alert `reconcile_sweep_age_seconds > 180` fires on. It was NaN, which
    # compares false with everything in PromQL: the alert stayed silent.
    assert sweep_age(auditor) == "+Inf"

    effects_sweep_task()

    age = sweep_age(auditor)
    assert age is not None and 0.0 <= float(age) < 5.0


def test_an_unreachable_cache_costs_the_scrape_only_this_figure(db, auditor, monkeypatch):
    """With the metrics token, a scrape needs no cache (no throttle): it still answers."""

    def unreachable() -> float:
        raise RedisConnectionError("cache down")

    monkeypatch.setattr(prometheus, "sweep_age_seconds", unreachable)

    assert sweep_age(auditor) is None
