"""Probes and the metrics scrape under any Host and over plain HTTP, in production settings;
every other path keeps ALLOWED_HOSTS and the redirect to HTTPS (config/any_host.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.test import Client

from config import heartbeat
from config.any_host import PLAIN_HTTP_PATHS

PUBLIC_NAME = "reconcile.example.org"
TOKEN = "scrape-token-0123456789abcdef"
# How the machines inside the network address one web host.
DIRECT_HOSTS = ["10.0.3.7:8000", "web1.internal:8000", "127.0.0.1:8000", "[fd00::7]:8000"]


@pytest.fixture
def production_http(settings) -> Iterator[Client]:
    """Production's host check and HTTPS redirect, as settings.py sets them."""
    settings.ALLOWED_HOSTS = [PUBLIC_NAME]
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_REDIRECT_EXEMPT = PLAIN_HTTP_PATHS
    settings.RECONCILE_METRICS_TOKEN = TOKEN
    heartbeat.worker_heartbeat_record("celery@test")
    yield Client()  # after the settings: middleware reads them when the handler loads
    heartbeat.heartbeats_clear()


@pytest.mark.parametrize("host", DIRECT_HOSTS)
def test_probes_and_the_scrape_answer_a_host_addressed_directly(production_http, db, host):
    assert production_http.get("/healthz", HTTP_HOST=host).status_code == 200
    assert production_http.get("/readyz", HTTP_HOST=host).status_code == 200
    scrape = production_http.get("/metrics", HTTP_HOST=host, HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert scrape.status_code == 200
    assert b"reconcile_http_request_duration_seconds" in scrape.content


def test_the_scrape_still_needs_its_token(production_http, db):
    for credentials in ({}, {"HTTP_AUTHORIZATION": "Bearer not-the-token"}):
        response = production_http.get("/metrics", HTTP_HOST=DIRECT_HOSTS[0], **credentials)
        assert response.status_code in (401, 403)
        assert response["Content-Type"] == "application/problem+json"


@pytest.mark.parametrize(
    "path", ["/", "/accounts/login/", "/api/v1/metrics", "/healthz/", "/api/docs/"]
)
def test_every_other_path_keeps_the_host_check(production_http, db, path):
    assert production_http.get(path, HTTP_HOST=DIRECT_HOSTS[0]).status_code == 400


def test_every_other_path_is_still_redirected_to_https(production_http, db):
    response = production_http.get("/accounts/login/", HTTP_HOST=PUBLIC_NAME)
    assert response.status_code == 301
    assert response["Location"] == f"https://{PUBLIC_NAME}/accounts/login/"
    for path in ("/healthz", "/readyz"):
        assert production_http.get(path, HTTP_HOST=PUBLIC_NAME).status_code == 200


def test_under_a_script_name_prefix_the_host_is_checked_as_for_any_path(production_http, db):
    # SecurityMiddleware's exemption sees the prefixed path; were the Host taken unchecked
    # here, the redirect to HTTPS would carry it into its Location.
    response = production_http.get("/healthz", SCRIPT_NAME="/reconcile", HTTP_HOST="evil.example")
    assert response.status_code == 400
    assert "Location" not in response
