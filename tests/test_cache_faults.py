"""The shared cache going away: API requests get a clean 503 `cache_unavailable` and nothing
is written. The cache holds the rate limits and key-failure lockouts that every API request
consults first (Redis with services); unreachable, it was a 500 `internal_error` on every
request."""

from __future__ import annotations

import errno
import os

import pytest
from redis import exceptions as redis_errors

from drills_app.bench.common import free_port
from reconcile_app.models import DecisionSnapshot
from reconcile_app.services import principals
from tests.listeners import silent_listener
from tests.reconcile_app.effects.conftest import SUBJECT, collectible  # noqa: F401

RECONCILE = {
    "subject": SUBJECT,
    "purpose": "collections",
    "decision_class": "collections-contact-release",
    "proposed_action": "release_collections_hold",
}


def _cache_at(settings, port: int) -> None:
    settings.CACHES = {
        "default": {
            "BACKEND": "config.cache.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{port}/1",
            # A silent server costs the test a second, not redis-py's default five.
            "OPTIONS": {"socket_timeout": 1, "socket_connect_timeout": 1},
        }
    }


@pytest.mark.parametrize("cache_server", ["refusing", "silent"])
def test_an_unreachable_cache_is_a_clean_503_and_writes_nothing(
    collectible, agent, settings, cache_server
):
    if cache_server == "refusing":
        _cache_at(settings, free_port())
        response = agent.post("/api/v1/reconcile", RECONCILE)
    else:
        with silent_listener() as port:
            _cache_at(settings, port)
            response = agent.post("/api/v1/reconcile", RECONCILE)

    assert response.status_code == 503, response.content
    assert response["Content-Type"] == "application/problem+json"
    assert response["Retry-After"] == "5"
    problem = response.json()
    assert problem["code"] == "cache_unavailable" and "could not be reached" in problem["detail"]
    assert not DecisionSnapshot.objects.exists()


def test_reads_are_refused_alike_not_let_through_unthrottled(agent, settings, db):
    _cache_at(settings, free_port())
    response = agent.get("/api/v1/snapshots")
    assert (response.status_code, response.json()["code"]) == (503, "cache_unavailable")


@pytest.mark.parametrize(
    ("error", "status", "code"),
    [
        (redis_errors.ReadOnlyError("a replica after failover"), 503, "cache_unavailable"),
        (redis_errors.BusyLoadingError("loading the dataset"), 503, "cache_unavailable"),
        # Full, under `maxmemory-policy noeviction`: it takes no writes, as a replica does.
        # Live, the throttle's script answered this and every API request was a 500.
        (
            redis_errors.OutOfMemoryError(
                "command not allowed when used memory > 'maxmemory'. script: 2915e11f"
            ),
            503,
            "cache_unavailable",
        ),
        # A fault to see and fix, not an outage to wait out.
        (redis_errors.AuthenticationError("invalid password"), 500, "internal_error"),
        (redis_errors.ResponseError("ERR Error running script"), 500, "internal_error"),
    ],
)
def test_only_a_cache_out_of_reach_is_unavailable(agent, db, monkeypatch, error, status, code):
    def failing(**kwargs: object) -> None:
        raise error

    monkeypatch.setattr(principals, "api_key_note_use", failing)
    response = agent.get("/api/v1/snapshots")
    assert (response.status_code, response.json()["code"]) == (status, code)


def test_a_file_cache_on_a_full_disk_is_a_clean_503_and_writes_nothing(
    collectible, agent, settings, tmp_path, monkeypatch
):
    # The embedded default's cache (config/file_cache.py). Live, with the var directory on a
    # full filesystem, the throttle's counter could not be written: 500 `internal_error`.
    settings.CACHES = {
        "default": {"BACKEND": "config.file_cache.FileCache", "LOCATION": str(tmp_path)}
    }

    def disk_full(*args: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "pwrite", disk_full)
    response = agent.post("/api/v1/reconcile", RECONCILE)
    monkeypatch.undo()

    assert response.status_code == 503, response.content
    assert response["Retry-After"] == "5"
    assert response.json()["code"] == "cache_unavailable"
    assert not DecisionSnapshot.objects.exists()
