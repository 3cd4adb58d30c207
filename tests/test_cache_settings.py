"""The shared cache (config/cache.py): RECONCILE_CACHE_URL, else the broker's Redis server on
the next database, else a file cache under the var directory."""

from __future__ import annotations

import os
import secrets
import threading
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.cache import cache_settings, cache_url_from_broker
from tests.fresh_interpreter import fresh_python

VAR = Path("/srv/reconcile/var")
REDIS = "config.cache.RedisCache"


def location(*, cache_url: str = "", broker_url: str) -> tuple[str, str]:
    default = cache_settings(cache_url=cache_url, broker_url=broker_url, var_dir=VAR)["default"]
    return default["BACKEND"], default["LOCATION"]


@pytest.mark.parametrize(
    ("broker_url", "cache_url"),
    [
        ("redis://redis.internal:6379/0", "redis://redis.internal:6379/1"),
        ("redis://redis.internal:6379/3", "redis://redis.internal:6379/4"),
        ("redis://redis.internal:6379", "redis://redis.internal:6379/1"),
        ("redis://redis.internal:6379/", "redis://redis.internal:6379/1"),
        # The last of Redis's sixteen databases wraps round rather than naming a 17th.
        ("redis://redis.internal:6379/15", "redis://redis.internal:6379/0"),
        # Credentials, TLS and options go with the server.
        (
            "rediss://:s3cret@redis.internal:6380/2?ssl_cert_reqs=required",
            "rediss://:s3cret@redis.internal:6380/3?ssl_cert_reqs=required",
        ),
    ],
)
def test_a_redis_broker_lends_its_server_on_the_next_database(broker_url, cache_url):
    assert cache_url_from_broker(broker_url) == cache_url
    assert location(broker_url=broker_url) == (REDIS, cache_url)


def test_an_explicit_cache_url_wins():
    assert location(
        cache_url="redis://cache.internal:6379/7", broker_url="redis://redis.internal:6379/0"
    ) == (REDIS, "redis://cache.internal:6379/7")


@pytest.mark.parametrize("broker_url", ["filesystem://", "amqp://rabbit.internal//", ""])
def test_without_redis_the_cache_is_a_directory_on_this_host(broker_url):
    assert cache_url_from_broker(broker_url) == ""
    assert location(broker_url=broker_url) == (
        "config.file_cache.FileCache",
        str(VAR / "cache"),
    )


def test_a_broker_database_that_is_not_a_number_is_refused_with_what_to_do():
    with pytest.raises(ImproperlyConfigured, match="RECONCILE_CACHE_URL"):
        cache_url_from_broker("redis://redis.internal:6379/queues")


def test_settings_read_the_broker_from_the_environment(tmp_path):
    """The settings module itself, loaded in a fresh process with only a Redis broker set."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("RECONCILE_CACHE_URL", "DATABASE_URL")
    }
    env.update(
        CELERY_BROKER_URL="redis://127.0.0.1:6379/5",
        RECONCILE_VAR_DIR=str(tmp_path),
        DJANGO_SETTINGS_MODULE="config.settings",
    )
    printed = fresh_python(
        "from django.conf import settings; print(settings.CACHES['default']['LOCATION'])",
        env=env,
    )
    assert printed.strip() == "redis://127.0.0.1:6379/6"


@pytest.fixture
def redis_cache():
    """The shared cache on the services mode's Redis, under a prefix of its own."""
    broker_url = os.environ.get("CELERY_BROKER_URL", "")
    if not broker_url.startswith("redis"):
        pytest.skip("needs the services mode's Redis (CELERY_BROKER_URL)")
    from config.cache import RedisCache

    prefix = f"test-{secrets.token_hex(4)}"
    return RedisCache(cache_url_from_broker(broker_url), {"KEY_PREFIX": prefix})


def test_the_redis_cache_reuses_one_client_for_every_operation(redis_cache):
    redis_cache.set("a", 1, 30)
    first = redis_cache._cache.get_client("a")
    assert redis_cache.get("a") == 1
    assert redis_cache._cache.get_client("b", write=True) is first


def test_the_redis_cache_increments_only_a_counter_that_exists_and_keeps_its_expiry(redis_cache):
    with pytest.raises(ValueError):
        redis_cache.incr("missing")
    assert redis_cache.get("missing") is None  # not created by the attempt

    redis_cache.add("counter", 1, 30)
    assert redis_cache.incr("counter") == 2
    assert redis_cache.incr("counter", 5) == 7
    assert redis_cache.decr("counter") == 6
    assert redis_cache.get("counter") == 6
    client = redis_cache._cache.get_client("counter")
    assert 0 < client.ttl(redis_cache.make_key("counter")) <= 30
    redis_cache.delete("counter")


def test_the_redis_cache_counts_a_window_and_reads_the_previous_in_one_round_trip(redis_cache):
    assert redis_cache.count_window("now", "before", 30) == (1, 0)
    redis_cache.set("before", 7, 30)
    assert redis_cache.count_window("now", "before", 30) == (2, 7)
    client = redis_cache._cache.get_client("now")
    # A new counter lives as long as it was asked to; counting on does not renew it.
    assert 0 < client.ttl(redis_cache.make_key("now")) <= 30
    client.expire(redis_cache.make_key("now"), 5)
    assert redis_cache.count_window("now", "before", 30) == (3, 7)
    assert client.ttl(redis_cache.make_key("now")) <= 5
    # Django's own calls read the same counter.
    assert redis_cache.get("now") == 3
    # The scripts go by digest: a server that forgot them (restarted, SCRIPT FLUSH) is sent
    # their text again.
    client.script_flush()
    assert redis_cache.count_window("now", "before", 30) == (4, 7)
    assert redis_cache.incr("now") == 5
    redis_cache.delete_many(["now", "before"])


def test_the_window_count_keeps_one_connection_per_thread_and_survives_losing_it(redis_cache):
    assert redis_cache.count_window("kept", "before", 30) == (1, 0)
    kept = redis_cache._cache._kept
    connection = kept.connection
    assert redis_cache.count_window("kept", "before", 30) == (2, 0)
    assert kept.connection is connection  # the same socket, not one from the pool each time

    elsewhere = {}
    thread = threading.Thread(
        target=lambda: elsewhere.update(
            counts=redis_cache.count_window("kept", "before", 30),
            connection=redis_cache._cache._kept.connection,
        )
    )
    thread.start()
    thread.join()
    assert elsewhere["counts"] == (3, 0)
    assert elsewhere["connection"] is not connection

    # The server drops the connection: the count still comes back (through the client) and
    # the kept connection reconnects for the next one. Nothing is counted twice.
    connection.send_command("CLIENT", "ID")
    kept_id = connection.read_response()
    assert redis_cache._cache.get_client("kept").client_kill_filter(_id=kept_id) == 1
    assert redis_cache.count_window("kept", "before", 30) == (4, 0)
    assert redis_cache.count_window("kept", "before", 30) == (5, 0)
    assert kept.connection is connection

    # In a forked child the parent's socket is not used: a connection of its own is taken.
    kept.pid = -1
    assert redis_cache.count_window("kept", "before", 30) == (6, 0)
    assert kept.connection is not connection
    redis_cache.delete_many(["kept", "before"])
