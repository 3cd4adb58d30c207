"""`/healthz` and `/readyz` (docs/api.md, "Operating it"): no authentication, nothing revealed
beyond "ok" / "unavailable", and readiness that fails when a dependency does."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from django.core.cache import cache
from django.db import connection, connections
from django.test import Client
from kombu import Connection

from config import health, heartbeat
from config.celery import app
from config.heartbeat import WorkerHeartbeat
from tests.listeners import silent_listener

CHECKS = {"database", "cache", "broker", "worker"}


@pytest.fixture
def anonymous() -> Client:
    return Client()


@pytest.fixture
def worker_alive() -> Iterator[None]:
    heartbeat.worker_heartbeat_record("celery@test")
    yield
    heartbeat.heartbeats_clear()


def test_healthz_answers_while_the_process_serves(anonymous, db):
    response = anonymous.get("/healthz")
    assert (response.status_code, response.json()) == (200, {"status": "ok"})
    assert "no-cache" in response["Cache-Control"]


def test_ready_with_every_dependency_and_a_fresh_heartbeat(anonymous, db, worker_alive):
    response = anonymous.get("/readyz")
    assert response.status_code == 200, response.content
    assert response.json() == {"status": "ok", "checks": dict.fromkeys(CHECKS, "ok")}


def test_not_ready_without_a_worker_heartbeat_within_a_minute(anonymous, db, worker_alive):
    readbacks = heartbeat.heartbeat_key("readbacks")
    cache.set(readbacks, {"at": time.time() - 61, "hostname": "celery@old"})
    stale = anonymous.get("/readyz")
    cache.delete(readbacks)
    missing = anonymous.get("/readyz")

    for response in (stale, missing):
        assert response.status_code == 503
        assert response.json()["status"] == "unavailable"
        assert response.json()["checks"] == {**dict.fromkeys(CHECKS, "ok"), "worker": "unavailable"}


def test_an_unreachable_broker_or_database_is_unavailable_and_says_no_more(
    anonymous, db, worker_alive, monkeypatch
):
    # Nothing listens on port 1: whichever broker the suite runs on, this one is unreachable.
    monkeypatch.setattr(
        app,
        "connection_for_write",
        lambda **options: Connection("redis://127.0.0.1:1/0", **options),
    )

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


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's read-only mode")
def test_a_database_that_refuses_every_write_is_unavailable(
    anonymous, db, worker_alive, monkeypatch
):
    # A standby (the old primary after a failover) or a database set read-only answers a
    # SELECT, and refuses every reconcile and commit (500 on each).
    options = connections["default"].settings_dict["OPTIONS"]
    read_only = f"{options.get('options', '')} -c default_transaction_read_only=on"
    monkeypatch.setitem(options, "options", read_only)
    response = anonymous.get("/readyz")

    assert response.status_code == 503
    assert response.json()["checks"] == {**dict.fromkeys(CHECKS, "ok"), "database": "unavailable"}


def test_not_ready_while_no_worker_consumes_the_readbacks(anonymous, db):
    # Workers per queue (docs/deploy.md): only a drills worker and a default one are alive.
    heartbeat.heartbeats_clear()
    heartbeat.worker_heartbeat_record("celery@drills", ("drills", "default", "corrections"))
    response = anonymous.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["worker"] == "unavailable"
    heartbeat.worker_heartbeat_record("celery@readbacks", ("readbacks",))
    assert anonymous.get("/readyz").status_code == 200
    heartbeat.heartbeats_clear()


def test_ready_on_a_worker_of_the_release_before_while_none_writes_per_queue(anonymous, db):
    # A rolling upgrade with the web hosts first: the old workers write only the one key.
    heartbeat.heartbeats_clear()
    cache.set(heartbeat.LEGACY_HEARTBEAT_KEY, {"at": time.time(), "hostname": "celery@old"})
    assert anonymous.get("/readyz").status_code == 200
    # Once a worker of this release runs, the per-queue keys decide.
    heartbeat.worker_heartbeat_record("celery@drills", ("drills",))
    assert anonymous.get("/readyz").status_code == 503
    heartbeat.heartbeats_clear()


def test_only_get_and_head(anonymous, db, worker_alive):
    # As a server answers them: the CSRF middleware checks a POST before the view's methods.
    strict = Client(enforce_csrf_checks=True)
    assert strict.post("/healthz").status_code == 405
    assert strict.post("/readyz").status_code == 405
    # Some load balancers probe with HEAD.
    assert anonymous.head("/healthz").status_code == 200
    assert anonymous.head("/readyz").status_code == 200


def test_unready_is_one_warning_naming_the_failing_checks_not_a_server_error(anonymous, db, caplog):
    heartbeat.heartbeats_clear()
    with caplog.at_level(logging.INFO):
        assert anonymous.get("/readyz").status_code == 503

    said = [(r.name, r.levelname, r.getMessage()) for r in caplog.records]
    named = "no worker heartbeat within 60 s for readbacks (none seen), corrections (none seen), "
    assert (
        "config.health",
        "WARNING",
        f"not ready: worker unavailable (worker: {named}default (none seen))",
    ) in said
    assert not [entry for entry in said if entry[1] == "ERROR"], said


def test_an_outage_is_one_line_a_minute_and_the_recovery_one_more(anonymous, db, caplog):
    """Probes every few seconds from a load balancer and an orchestrator: the first unready
    probe is logged, its repeats are counted into a line a minute, the return is logged."""
    heartbeat.heartbeats_clear()
    with caplog.at_level(logging.INFO):
        for _ in range(4):
            assert anonymous.get("/readyz").status_code == 503
        heartbeat.worker_heartbeat_record("celery@test")
        assert anonymous.get("/readyz").status_code == 200
        assert anonymous.get("/readyz").status_code == 200
    heartbeat.heartbeats_clear()

    said = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "config.health"]
    assert [level for level, _ in said] == ["WARNING", "INFO"], said
    assert said[0][1].startswith("not ready: worker unavailable (worker: ")
    assert said[1][1].startswith("ready again: worker available after ")


def test_a_lasting_outage_is_told_again_each_minute_and_a_new_failure_at_once(caplog):
    now = [1000.0]
    log = health.ReadinessLog(clock=lambda: now[0])
    with caplog.at_level(logging.INFO, logger="config.health"):
        for step in range(13):  # a probe every 10 s for two minutes
            now[0] = 1000.0 + 10 * step
            log.note(("worker",), "worker: none seen")
        now[0] += 5
        log.note(("broker", "worker"), "broker: refused")
        now[0] += 5
        log.note((), "")

    assert [r.getMessage() for r in caplog.records] == [
        "not ready: worker unavailable (worker: none seen)",
        "still not ready: worker unavailable for 60 s, 6 probes since the last line "
        "(worker: none seen)",
        "still not ready: worker unavailable for 120 s, 6 probes since the last line "
        "(worker: none seen)",
        "not ready: broker, worker unavailable (broker: refused)",
        "ready again: broker, worker available after 5 s unready",
    ]


def test_unready_names_the_queue_without_a_worker_and_who_served_it_last(
    anonymous, db, caplog, monkeypatch
):
    # Workers per queue (docs/deploy.md): the readbacks workers stopped 75 s ago, the others
    # run. The answer says only "worker: unavailable"; the on-call engineer reads the log.
    heartbeat.heartbeats_clear()
    heartbeat.worker_heartbeat_record("others@box", ("corrections", "drills", "default"))
    monkeypatch.setattr(time, "time", lambda: 1_000_000.0)
    cache.set(heartbeat.heartbeat_key("readbacks"), {"at": 999_925.0, "hostname": "rb@box"})
    cache.set(heartbeat.heartbeat_key("default"), {"at": 999_990.0, "hostname": "others@box"})
    cache.set(heartbeat.heartbeat_key("corrections"), {"at": 999_990.0, "hostname": "others@box"})
    with caplog.at_level(logging.WARNING):
        response = anonymous.get("/readyz")
    heartbeat.heartbeats_clear()

    assert response.json()["checks"]["worker"] == "unavailable"
    assert b"rb@box" not in response.content
    said = [r.getMessage() for r in caplog.records if r.name == "config.health"]
    assert said == [
        "not ready: worker unavailable "
        "(worker: no worker heartbeat within 60 s for readbacks (last from rb@box, 75 s ago))"
    ]


def test_a_worker_records_its_heartbeat_on_start_and_on_its_timer(db):
    heartbeat.heartbeats_clear()
    calls: list[tuple] = []
    timer = SimpleNamespace(
        call_repeatedly=lambda secs, fun, args, priority: calls.append((secs, fun, args)) or "ref"
    )
    # A worker started with `-Q readbacks`: its heartbeat speaks for that queue alone.
    queues = SimpleNamespace(consume_from={"readbacks": object()})
    worker = SimpleNamespace(
        hostname="celery@box", timer=timer, app=SimpleNamespace(amqp=SimpleNamespace(queues=queues))
    )
    step = WorkerHeartbeat(worker)

    step.start(worker)

    assert cache.get(heartbeat.heartbeat_key("readbacks"))["hostname"] == "celery@box"
    assert cache.get(heartbeat.heartbeat_key("default")) is None
    assert calls == [
        (
            heartbeat.HEARTBEAT_EVERY_SECONDS,
            heartbeat.worker_heartbeat_record,
            ("celery@box", ("readbacks",)),
        )
    ]
    assert WorkerHeartbeat in app.steps["worker"]


@pytest.fixture
def short_deadline(monkeypatch) -> float:
    monkeypatch.setattr(health, "READY_DEADLINE_SECONDS", 0.5)
    return 0.5


def _until_no_check_runs(within_seconds: float) -> set[str]:
    until = time.monotonic() + within_seconds
    while health.checks_running() and time.monotonic() < until:
        time.sleep(0.05)
    return health.checks_running()


def test_a_check_that_never_ends_costs_readyz_its_deadline_and_one_thread(
    anonymous, db, worker_alive, short_deadline, monkeypatch
):
    release, calls = threading.Event(), []

    def hung() -> bool:
        calls.append(1)
        return release.wait(30)

    monkeypatch.setitem(health.CHECKS, "broker", hung)
    try:
        started = time.monotonic()
        first = anonymous.get("/readyz")
        second = anonymous.get("/readyz")
        took = time.monotonic() - started

        for response in (first, second):
            assert response.status_code == 503
            assert response.json()["checks"] == {
                **dict.fromkeys(CHECKS, "ok"),
                "broker": "unavailable",
            }
        # The first probe waited out its deadline; the second saw the same check still
        # running, counted it unavailable and started no other.
        assert took < 2 * short_deadline + 1.0
        assert len(calls) == 1 and health.checks_running() == {"broker"}
    finally:
        release.set()
    assert _until_no_check_runs(5) == set()
    assert anonymous.get("/readyz").json()["checks"]["broker"] == "ok"


def test_a_broker_and_cache_that_accept_and_never_answer_are_unavailable_in_time(
    anonymous, db, short_deadline, monkeypatch, settings
):
    with silent_listener() as port:
        hung_redis = f"redis://127.0.0.1:{port}"
        monkeypatch.setattr(
            app, "connection_for_write", lambda **options: Connection(f"{hung_redis}/0", **options)
        )
        settings.CACHES = {
            "default": {"BACKEND": "config.cache.RedisCache", "LOCATION": f"{hung_redis}/1"}
        }
        started = time.monotonic()
        response = anonymous.get("/readyz")

        assert time.monotonic() - started < short_deadline + 1.0
        assert response.status_code == 503
        assert response.json()["checks"] == {
            "database": "ok",
            "cache": "unavailable",
            "broker": "unavailable",
            "worker": "unavailable",
        }
        # Their own socket timeouts end the threads while the server still says nothing:
        # a hung dependency does not keep threads for good.
        assert _until_no_check_runs(20) == set()


def test_probes_at_once_share_the_runs_and_keep_one_thread_per_check(db, worker_alive, monkeypatch):
    # A threaded server (gthread workers) answers a load balancer's and an orchestrator's
    # probes at the same time: the second waits for the runs the first started, rather
    # than counting them unavailable.
    def slow_ok() -> bool:
        time.sleep(0.2)
        return True

    for name in CHECKS:
        monkeypatch.setitem(health.CHECKS, name, slow_ok)
    answers: list[dict[str, bool]] = []
    probes = [
        threading.Thread(target=lambda: answers.append(health.ready_checks(2.0))) for _ in range(2)
    ]
    for probe in probes:
        probe.start()
    for probe in probes:
        probe.join(10)

    assert answers == [dict.fromkeys(CHECKS, True)] * 2
    for _ in range(5):
        health.ready_checks(2.0)
    readiness_threads = [t for t in threading.enumerate() if t.name.startswith("readyz-")]
    assert sorted(t.name for t in readiness_threads) == sorted(f"readyz-{n}" for n in CHECKS)
