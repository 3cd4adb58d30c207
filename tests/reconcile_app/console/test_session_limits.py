"""Console sessions end after 30 minutes without a request and 12 hours after sign-in: an
unattended browser stayed signed in to an operator's powers for two weeks."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client

from reconcile_app.console.session_limits import SEEN_AT, SIGNED_IN_AT


def shift(client: Client, **seconds_ago: int) -> None:
    """Move the session's stamps into the past, as if time had passed since."""
    session = client.session
    for name, ago in seconds_ago.items():
        session[name] = session[name] - ago
    session.save()


def test_sign_in_through_the_form_stamps_the_session(operator: Any) -> None:
    client = Client()
    response = client.post(
        "/accounts/login/",
        {"username": operator.user.username, "password": "correct-horse-battery"},
    )
    assert response.status_code == 302
    assert isinstance(client.session[SIGNED_IN_AT], int)
    assert isinstance(client.session[SEEN_AT], int)


def test_a_session_idle_past_the_limit_is_signed_out_and_told_why(operator_browser):
    assert operator_browser.get("/quarantine/").status_code == 200
    shift(operator_browser, reconcile_seen_at=31 * 60)

    response = operator_browser.get("/quarantine/", follow=True)

    assert response.redirect_chain[0][0].startswith("/accounts/login/?next=/quarantine/")
    assert "You were signed out 30 minutes without activity" in response.content.decode()
    # Signed out for good, not only on this request.
    assert operator_browser.get("/quarantine/").status_code == 302


def test_a_write_after_the_idle_limit_is_refused_and_changes_nothing(operator_browser):
    from reconcile_app.models import Quarantine

    shift(operator_browser, reconcile_seen_at=31 * 60)
    response = operator_browser.post(
        "/quarantine/", {"scope": "source", "target": "case-service", "reason": "stale tab"}
    )
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert not Quarantine.objects.exists()


def test_activity_within_the_limit_keeps_the_session(operator_browser):
    shift(operator_browser, reconcile_seen_at=29 * 60)
    assert operator_browser.get("/quarantine/").status_code == 200
    # The request was seen: the idle count starts again from it.
    shift(operator_browser, reconcile_seen_at=29 * 60)
    assert operator_browser.get("/quarantine/").status_code == 200


def test_a_busy_session_still_ends_twelve_hours_after_sign_in(operator_browser):
    shift(operator_browser, reconcile_signed_in_at=12 * 3600 + 60)
    response = operator_browser.get("/quarantine/", follow=True)
    assert "You were signed out 12 hours after you signed in" in response.content.decode()


def test_the_api_signed_by_an_ended_session_answers_401(operator_browser):
    shift(operator_browser, reconcile_seen_at=31 * 60)
    response = operator_browser.get("/api/v1/quarantines")
    assert response.status_code in (401, 403)
    assert response["Content-Type"] == "application/problem+json"


def test_a_session_from_before_the_limits_counts_from_its_next_request(operator_browser):
    session = operator_browser.session
    del session[SIGNED_IN_AT], session[SEEN_AT]
    session.save()
    assert operator_browser.get("/quarantine/").status_code == 200
    assert isinstance(operator_browser.session[SEEN_AT], int)


@pytest.mark.parametrize("ended_by", ["idle", "disabled"])
def test_a_live_refresh_without_a_session_sends_the_page_to_sign_in(
    operator, operator_browser, ended_by
):
    """Swapped into the table region, the sign-in form would sit inside the queue."""
    if ended_by == "idle":
        shift(operator_browser, reconcile_seen_at=31 * 60)
    else:
        operator.user.is_active = False
        operator.user.save()
    response = operator_browser.get(
        "/effects/?status=unknown",
        HTTP_HX_REQUEST="true",
        HTTP_HX_CURRENT_URL="http://testserver/effects/?status=unknown",
    )
    assert response.status_code == 200
    target = urlsplit(response["HX-Redirect"])
    assert target.path == "/accounts/login/"
    assert parse_qs(target.query) == {"next": ["/effects/?status=unknown"]}


def test_the_client_redirect_to_sign_in_is_kept_by_no_cache(client):
    """A 200 whose body is empty: a cache keeping it would answer the page's own URL with it."""
    response = client.get("/effects/", HTTP_HX_REQUEST="true")
    assert "no-store" in response["Cache-Control"]
    assert {"HX-Request", "X-Reconcile-Background"} <= {
        name.strip() for name in response["Vary"].split(",")
    }


def test_an_htmx_request_never_redirects_to_another_site(client):
    response = client.get(
        "/effects/", HTTP_HX_REQUEST="true", HTTP_HX_CURRENT_URL="https://evil.example"
    )
    assert parse_qs(urlsplit(response["HX-Redirect"]).query) == {"next": ["/"]}


def test_a_request_within_the_idle_limit_of_the_last_one_keeps_the_session(
    operator_browser, settings
):
    """The last-seen time is saved at most once a minute: counted from that saved time, a
    person busy every 50 seconds under a one-minute limit (the least allowed) was signed out
    on their third request, 50 seconds after their second."""
    settings.RECONCILE_SESSION_IDLE_SECONDS = 60
    assert operator_browser.get("/quarantine/").status_code == 200
    shift(operator_browser, reconcile_seen_at=50, reconcile_signed_in_at=50)
    assert operator_browser.get("/quarantine/").status_code == 200  # 50 s after the first
    shift(operator_browser, reconcile_seen_at=50, reconcile_signed_in_at=50)
    assert operator_browser.get("/quarantine/").status_code == 200  # 50 s after the second


BACKGROUND = {"HTTP_X_RECONCILE_BACKGROUND": "1"}


def test_a_live_page_refreshing_itself_is_no_activity(operator_browser):
    """A console left open on a live queue stayed signed in for twelve hours: each check
    counted as the person's activity. The page's own requests say so and count for nothing."""
    shift(operator_browser, reconcile_seen_at=29 * 60)
    seen = operator_browser.session[SEEN_AT]

    assert operator_browser.get("/effects/?live=0.0.x", **BACKGROUND).status_code == 200
    assert (
        operator_browser.get("/effects/", HTTP_HX_REQUEST="true", **BACKGROUND).status_code == 200
    )
    assert operator_browser.session[SEEN_AT] == seen

    shift(operator_browser, reconcile_seen_at=2 * 60)
    response = operator_browser.get(
        "/effects/?live=0.0.x",
        HTTP_HX_CURRENT_URL="http://testserver/effects/?status=unknown",
        **BACKGROUND,
    )
    # A live queue's check is a plain fetch: it is sent to sign-in as an htmx request is.
    target = urlsplit(response["HX-Redirect"])
    assert target.path == "/accounts/login/"
    assert parse_qs(target.query) == {"next": ["/effects/?status=unknown"]}
    assert operator_browser.get("/effects/").status_code == 302  # signed out for good


def test_a_page_the_person_asks_for_still_counts(operator_browser):
    shift(operator_browser, reconcile_seen_at=29 * 60)
    seen = operator_browser.session[SEEN_AT]
    assert operator_browser.get("/effects/", HTTP_HX_REQUEST="true").status_code == 200
    assert operator_browser.session[SEEN_AT] > seen
