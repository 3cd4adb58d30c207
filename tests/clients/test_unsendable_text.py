"""Text that UTF-8 or JSON cannot carry (a lone surrogate, as a broken decoder or
`os.fsdecode` leaves in a str; a NaN) is refused before sending as a ValidationError, the
way the server refuses it: httpx raised UnicodeEncodeError or ValueError while building the
request, and a commit stopped so was noted as perhaps sent.

No server: a transport that fails the test if anything reaches it.
"""

from __future__ import annotations

import httpx
import pytest
from reconcile_client import ReconcileClient, _flows, errors
from reconcile_client.models import Snapshot

from tests.clients.test_flows import SNAPSHOT, Driver

URL = "http://reconcile.test"
LONE = "acct-\ud800"
RELEASE = next(iter(SNAPSHOT["actions"]))


def nothing_sent(request: httpx.Request) -> httpx.Response:
    raise AssertionError(f"sent {request.method} {request.url}")


def client() -> ReconcileClient:
    http = httpx.Client(base_url=URL, transport=httpx.MockTransport(nothing_sent))
    return ReconcileClient(URL, "rk_test", http_client=http)


@pytest.mark.parametrize(
    ("call", "code"),
    [
        (
            lambda rc: rc.reconcile(
                subject=LONE, purpose="p", decision_class="d", proposed_action="a"
            ),
            "malformed_json",
        ),
        (
            lambda rc: rc.reconcile(
                subject="acct-1",
                purpose="p",
                decision_class="d",
                proposed_action="a",
                proposed_value=float("nan"),
            ),
            "malformed_json",
        ),
        (lambda rc: rc.snapshot("snap_\udc80"), "invalid_identifier"),
        (lambda rc: rc.effect(LONE), "invalid_identifier"),
        (lambda rc: rc.memories(subject=LONE), "invalid_parameter"),
    ],
)
def test_text_utf8_cannot_carry_is_refused_before_sending(call, code) -> None:
    with client() as rc, pytest.raises(errors.ValidationError) as caught:
        call(rc)
    assert (caught.value.status, caught.value.code) == (400, code)


def test_a_commit_of_a_value_utf8_cannot_carry_names_its_key_and_sent_nothing() -> None:
    driver = Driver([])
    with pytest.raises(errors.ValidationError) as caught:
        driver.run(
            _flows.commit(
                Snapshot.from_json(SNAPSHOT),
                action=RELEASE,
                resulting_value=LONE,
                idempotency_key="k-1",
                if_match=None,
                attempts=3,
            )
        )
    assert (caught.value.status, caught.value.code) == (400, "malformed_json")
    assert caught.value.idempotency_key == "k-1" and driver.sent == []


def test_such_a_commit_is_not_noted_as_perhaps_sent() -> None:
    """A commit stopped by anything but a problem is noted 'may have reached the server'
    and its intent kept as in flight: this one reached nothing."""
    with client() as rc:
        with pytest.raises(errors.ValidationError) as caught:
            rc.commit("snap_1", action=RELEASE, resulting_value=LONE, if_match='"1"')
        assert not getattr(caught.value, "__notes__", None)
        (entry,) = rc._commit_keys._keys.values()
        assert entry == (caught.value.idempotency_key, False)
