"""Faults nothing else answered (config/urls.py handler500): the console shows a page that says
what happened and what to do, the API answers problem+json, never Django's bare
"Server Error (500)". A database or cache out of reach is a 503 with Retry-After."""

from __future__ import annotations

import json

import pytest
from django.db import OperationalError
from django.db.backends.base.base import BaseDatabaseWrapper
from django.test import Client

from drills_app.bench.common import free_port
from reconcile_app.console.views import overview


def _refuse_the_database(monkeypatch) -> None:
    def refuse(self):
        raise OperationalError("could not connect to server: Connection refused")

    monkeypatch.setattr(BaseDatabaseWrapper, "ensure_connection", refuse)


@pytest.fixture
def console(operator) -> Client:
    # Faults are answered, not raised into the test: as a browser meets them.
    client = Client(raise_request_exception=False)
    client.force_login(operator.user)
    return client


def test_a_console_page_with_the_database_out_of_reach_is_a_503_page(console, monkeypatch):
    _refuse_the_database(monkeypatch)
    # The session is read in a middleware (the signed-in user), before any view runs.
    response = console.get("/", HTTP_X_REQUEST_ID="outage-1")
    monkeypatch.undo()

    assert response.status_code == 503
    assert response["Content-Type"].startswith("text/html")
    assert response["Retry-After"] == "5"
    assert response["Cache-Control"] == "no-store"
    page = response.content.decode()
    assert "Reconcile cannot reach its database" in page
    assert "database_unavailable" in page
    assert "<code>outage-1</code>" in page  # the id the logs carry
    assert 'href="/readyz"' in page
    assert "Server Error (500)" not in page


def test_an_htmx_request_in_an_outage_says_so_in_the_page(console, monkeypatch):
    _refuse_the_database(monkeypatch)
    response = console.get("/", HTTP_HX_REQUEST="true", HTTP_X_REQUEST_ID="outage-2")
    monkeypatch.undo()

    assert response.status_code == 503
    message = json.loads(response["HX-Trigger"])["console-message"]
    assert message["level"] == "error"
    assert message["key"] == "server-fault"  # one such message at a time in the page
    assert message["until_success"] is True  # gone when a request succeeds again
    assert "cannot reach its database (database_unavailable)" in message["text"]
    assert message["ref"] == "outage-2"


def test_signing_in_with_the_cache_out_of_reach_is_a_503_page(settings, db):
    # The login throttle counts attempts in the shared cache (Redis with services).
    settings.CACHES = {
        "default": {
            "BACKEND": "config.cache.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{free_port()}/1",
            "OPTIONS": {"socket_timeout": 1, "socket_connect_timeout": 1},
        }
    }
    response = Client(raise_request_exception=False).post(
        "/accounts/login/", {"username": "olivia-operator", "password": "correct-horse-battery"}
    )
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert "Reconcile cannot reach its shared cache" in response.content.decode()


def test_an_unexpected_fault_is_a_500_page_with_its_request_id(console, monkeypatch):
    def broken(self, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(overview.OverviewView, "get_context_data", broken)
    response = console.get("/", HTTP_X_REQUEST_ID="bug-1", HTTP_HX_REQUEST="true")

    assert response.status_code == 500
    assert "Retry-After" not in response
    page = response.content.decode()
    assert "Something went wrong on the server" in page and "<code>bug-1</code>" in page
    message = json.loads(response["HX-Trigger"])["console-message"]
    assert message["text"] == "The server could not complete this; it has been logged."
    assert message["ref"] == "bug-1"


def test_an_api_fault_outside_the_view_is_still_problem_json(console, monkeypatch):
    # A session-signed API call reads its user in a middleware, before the API's own
    # exception handling: the database refused there was Django's HTML 500.
    _refuse_the_database(monkeypatch)
    response = console.get("/api/v1/snapshots")
    monkeypatch.undo()

    assert response.status_code == 503
    assert response["Content-Type"] == "application/problem+json"
    assert response["Retry-After"] == "5"
    assert response.json()["code"] == "database_unavailable"


def test_the_scrape_in_an_outage_is_problem_json(operator, monkeypatch):
    # /metrics is one of the schema's operations: its 503 is declared as problem+json.
    _refuse_the_database(monkeypatch)
    response = Client(raise_request_exception=False).get(
        "/metrics", HTTP_AUTHORIZATION=f"Bearer {operator.key}"
    )
    monkeypatch.undo()

    assert response.status_code == 503
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "database_unavailable"


def test_a_page_that_cannot_be_drawn_still_answers_in_plain_words(console, monkeypatch):
    from reconcile_app import server_errors

    def broken_page(*args, **kwargs):
        raise ValueError("Missing staticfiles manifest entry for 'reconcile/console.css'")

    monkeypatch.setattr(server_errors, "render_to_string", broken_page)
    _refuse_the_database(monkeypatch)
    response = console.get("/")
    monkeypatch.undo()

    assert response.status_code == 503
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response.content.decode() == (
        "Reconcile cannot reach its database (database_unavailable); try again in 5 seconds.\n"
    )


@pytest.mark.parametrize(
    ("path", "headers"),
    [
        # More query parameters than DATA_UPLOAD_MAX_NUMBER_FIELDS (1,000).
        ("/api/v1/snapshots?" + "&".join(f"a{n}=1" for n in range(1001)), {}),
        ("/api/v1/snapshots", {"HTTP_HOST": "scanner.example"}),
    ],
)
def test_a_request_refused_before_any_view_is_problem_json_on_the_api(agent, path, headers):
    response = agent.client.get(path, **headers)
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["code"] == "invalid_request" and "scanner" not in body["detail"]


def test_the_console_keeps_djangos_page_for_a_refused_host(db):
    response = Client().get("/snapshots/", HTTP_HOST="scanner.example")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html")
