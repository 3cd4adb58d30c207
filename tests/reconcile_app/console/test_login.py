"""Sign-in: one lockout per username on the only sign-in form served, and an address cap.

docs/api.md: sign-in failures count per username across every sign-in form the product serves;
once locked, the right password is refused too. No Django admin is served, so there is no
second form whose guesses would go uncounted.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.conftest import make_person

PASSWORD = "correct-horse-battery"
LOCKED = "Too many failed sign-ins"


@pytest.fixture
def small_limits(settings: Any) -> None:
    # Two failures per username, so eight (four times that) per address.
    settings.RECONCILE_FAILURE_LIMITS = {"login": 2, "api_key": 3}


def sign_in(client: Client, username: str, password: str, **headers: Any) -> Any:
    return client.post("/accounts/login/", {"username": username, "password": password}, **headers)


def signed_in(response: Any) -> bool:
    return response.status_code == 302


@pytest.mark.parametrize("path", ["/admin/", "/admin/login/", "/admin/auth/user/"])
def test_no_admin_is_served(client, db, path):
    User.objects.create_superuser("root", password=PASSWORD)

    assert client.get(path).status_code == 404
    answer = client.post(path, {"username": "root", "password": PASSWORD})
    assert answer.status_code == 404
    assert "_auth_user_id" not in client.session


def test_a_locked_username_refuses_the_right_password(client, operator, small_limits):
    for _ in range(2):
        assert not signed_in(sign_in(client, operator.name, "wrong"))

    refused = sign_in(client, operator.name, PASSWORD)

    assert refused.status_code == 200
    assert LOCKED in refused.content.decode()
    assert "_auth_user_id" not in client.session


def test_failures_count_on_the_username_whatever_its_case(client, operator, small_limits):
    sign_in(client, operator.name.upper(), "wrong")
    sign_in(client, f"  {operator.name.title()} ", "wrong")

    refused = sign_in(client, operator.name, PASSWORD)

    assert LOCKED in refused.content.decode()


def test_a_locked_username_stays_locked_under_its_compatibility_spelling(client, db, small_limits):
    # Django's username field reads fullwidth "ada" (U+FF41...) as "ada" (NFKC): one account,
    # so the same budget of guesses.
    make_person("ada", "auditor", password=PASSWORD)
    for _ in range(2):
        sign_in(client, "ada", "wrong")

    fullwidth = sign_in(Client(), "\uff41\uff44\uff41", PASSWORD)

    assert not signed_in(fullwidth)
    assert LOCKED in fullwidth.content.decode()


def test_one_locked_username_leaves_other_people_signing_in(client, operator, small_limits):
    reviewer = make_person("rhys-reviewer", "reviewer")
    for _ in range(2):
        sign_in(client, operator.name, "wrong")

    assert signed_in(sign_in(Client(), reviewer.name, PASSWORD))


def test_one_address_cycling_through_usernames_is_capped(client, operator, small_limits):
    for number in range(8):
        sign_in(client, f"someone-{number}", "wrong")

    refused = sign_in(client, operator.name, PASSWORD)

    assert LOCKED in refused.content.decode()


def test_a_forged_forwarded_for_does_not_escape_the_address_cap(client, operator, small_limits):
    """No trusted proxy (the default): X-Forwarded-For is the client's own words."""
    for number in range(8):
        sign_in(client, f"someone-{number}", "wrong", HTTP_X_FORWARDED_FOR=f"198.51.100.{number}")

    refused = sign_in(client, operator.name, PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.99")

    assert LOCKED in refused.content.decode()


def test_behind_one_trusted_proxy_the_last_forwarded_hop_is_the_address(
    client, operator, small_limits, settings
):
    settings.RECONCILE_TRUSTED_PROXY_COUNT = 1
    for number in range(8):
        # The client wrote the first entry; the proxy appended the address it saw.
        sign_in(
            client,
            f"someone-{number}",
            "wrong",
            HTTP_X_FORWARDED_FOR=f"10.0.0.{number}, 203.0.113.5",
        )

    from_the_guesser = sign_in(
        client, operator.name, PASSWORD, HTTP_X_FORWARDED_FOR="10.0.0.99, 203.0.113.5"
    )
    from_elsewhere = sign_in(
        Client(), operator.name, PASSWORD, HTTP_X_FORWARDED_FOR="203.0.113.5, 198.51.100.7"
    )

    assert LOCKED in from_the_guesser.content.decode()
    assert signed_in(from_elsewhere)
