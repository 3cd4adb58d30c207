"""Where a refused console form's page waits for the redirect that shows it: not in the
session store.

The page (reconcile_app/console/refusals.py) is the whole rendered page: the entry's values,
the subject, and the draft the operator typed, which the refusal kept nowhere else. In the
session it was a database row (and WAL, and backups) until the browser came back for it, or
for two weeks (the session's life) when it never did: a client that does not follow the 303,
a tab closed, a connection lost.
"""

from __future__ import annotations

import pytest
from django.contrib.sessions.models import Session
from django.core.cache import cache
from redis.exceptions import ConnectionError as RedisConnectionError

from reconcile_app.console import refusals
from tests.reconcile_app.lineage_chain import chain, collectible  # noqa: F401 (fixtures)

PAGE = "/evidence/ev-collect/"
TYPED = "jane.typed@example.com"


def refuse(browser):
    """A correction with a replacement the operator typed and no reason: refused (400)."""
    return browser.post(
        f"{PAGE}correct/",
        {"reason": "", "replacement": f'"{TYPED}"'},
        HTTP_REFERER=f"http://testserver{PAGE}",
    )


def sessions_hold(text: str) -> bool:
    return any(
        text in str(row.get_decoded()) or text in row.session_data for row in Session.objects.all()
    )


def test_a_refused_page_never_rests_in_the_session_store(chain, operator_browser):
    response = refuse(operator_browser)  # the redirect is not followed

    assert response.status_code == 303 and response["Location"] == PAGE
    assert not sessions_hold(TYPED)
    assert not sessions_hold("account-17")  # nothing of the page: not even its subject

    # Followed, the page is shown once, with the draft and the error, as before.
    shown = operator_browser.get(PAGE)
    assert shown["X-Console-Refused-Form"] == "kept" and shown.status_code == 400
    assert TYPED in shown.content.decode()
    again = operator_browser.get(PAGE)
    assert again.status_code == 200 and "X-Console-Refused-Form" not in again


def test_a_kept_page_lives_a_minute_at_most(chain, operator_browser, monkeypatch):
    kept: dict[str, int | None] = {}
    set_in_cache = cache.set

    def noting(key, value, timeout=None, **kwargs):
        kept[key] = timeout
        return set_in_cache(key, value, timeout, **kwargs)

    monkeypatch.setattr(cache, "set", noting)
    refuse(operator_browser)
    assert list(kept.values()) == [refusals.KEPT_SECONDS] and refusals.KEPT_SECONDS <= 60

    cache.clear()  # the minute passed: the page reads afresh, no error shown
    late = operator_browser.get(PAGE)
    assert late.status_code == 200 and "X-Console-Refused-Form" not in late


@pytest.mark.parametrize("failing", ["set", "get"])
def test_with_the_cache_out_of_reach_a_refusal_is_answered_in_place(
    chain, operator_browser, monkeypatch, failing
):
    def unreachable(*args, **kwargs):
        raise RedisConnectionError("Connection refused")

    if failing == "set":
        monkeypatch.setattr(cache, "set", unreachable)
        response = refuse(operator_browser)
        # The refused page at the action's URL, as without the redirect: nothing lost.
        assert response.status_code == 400 and TYPED in response.content.decode()
        assert not sessions_hold(TYPED)
        return
    assert refuse(operator_browser).status_code == 303
    monkeypatch.setattr(cache, "get", unreachable)
    fresh = operator_browser.get(PAGE)
    assert fresh.status_code == 200 and "X-Console-Refused-Form" not in fresh
