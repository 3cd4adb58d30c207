"""`/healthz` and `/readyz` (docs/api.md, "Operating it"): no authentication, nothing revealed
beyond "ok" / "unavailable", and readiness that fails when a dependency does."""

from __future__ import annotations

import time
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from django.core.cache import cache
from django.test import Client
from kombu import Connection

from config import health, heartbeat
from config.celery import app
from config.heartbeat import WorkerHeartbeat

CHECKS = {"database", "cache", "broker", "worker"}


@pytest.fixture
def anonymous() -> Client:
    return Client()


@pytest.fixture
def worker_alive() -> Iterator[None]:
    heartbeat.worker_heartbeat_record("celery@test")
    yield
    cache.delete(heartbeat.HEARTBEAT_KEY)


def test_healthz_answers_while_the_process_serves(anonymous, db):
    response = anonymous.get("/healthz")
    assert (response.status_code, response.json()) == (200, {"status": "ok"})
    assert "no-cache" in response["Cache-Control"]


def test_ready_with_every_dependency_and_a_fresh_heartbeat(anonymous, db, worker_alive):
    response = anonymous.get("/readyz")
    assert response.status_code == 200, response.content
    assert response.json() == {"status": "ok", "checks": dict.fromkeys(CHECKS, "ok")}


def test_not_ready_without_a_worker_heartbeat_within_a_minute(anonymous, db, worker_alive):
    cache.set(heartbeat.HEARTBEAT_KEY, {"at": time.time() - 61, "hostname": "celery@old"})
    stale = anonymous.get("/readyz")
    cache.delete(heartbeat.HEARTBEAT_KEY)
    missing = anonymous.get("/readyz")

    for response in (stale, missing):
        assert response.status_code == 503
        assert response.json()["status"] == "unavailable"
        assert response.json()["checks"] == {**dict.fromkeys(CHECKS, "ok"), "worker": "unavailable"}


def test_an_unreachable_broker_or_database_is_unavailable_and_says_no_more(
    anonymous, db, worker_alive, monkeypatch
):
    # Nothing listens on port 1: whichever broker the suite runs on, this one is unreachable.
    monkeypatch.setattr(app, "connection_for_write", lambda: Connection("redis://127.0.0.1:1/0"))

    def broken() -> bool:
        raise RuntimeError("could not connect to server at 10.0.0.7: password for reconcile")

    monkeypatch.setitem(health.CHECKS, "database", broken)
    response = anonymous.get("/readyz")

    assert response.status_code == 503
    checks = response.json()["checks"]
    assert (checks["broker"], checks["database"], checks["cache"]) == (
        "unavailable",
        "unavailable",
        "ok",
    )
    assert b"10.0.0.7" not in response.content and b"password" not in response.content


def test_only_get(anonymous, db):
    assert anonymous.post("/healthz").status_code == 405
    assert anonymous.post("/readyz").status_code == 405


def test_a_worker_records_its_heartbeat_on_start_and_on_its_timer(db):
    cache.delete(heartbeat.HEARTBEAT_KEY)
    calls: list[tuple] = []
    timer = SimpleNamespace(
        call_repeatedly=lambda secs, fun, args, priority: calls.append((secs, fun, args)) or "ref"
    )
    worker = SimpleNamespace(hostname="celery@box", timer=timer)
    step = WorkerHeartbeat(worker)

    step.start(worker)

    assert cache.get(heartbeat.HEARTBEAT_KEY)["hostname"] == "celery@box"
    assert calls == [
        (heartbeat.HEARTBEAT_EVERY_SECONDS, heartbeat.worker_heartbeat_record, ("celery@box",))
    ]
    assert WorkerHeartbeat in app.steps["worker"]
