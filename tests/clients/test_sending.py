"""What the client puts on the wire is what it was asked to send, or nothing: an identifier
reaches the server as it is (`.` and `..` are not normalised into another route), a value no
header can carry is refused before sending (not reported as a lost answer), and the API key
never appears in an exception, a log line or a model's tool result."""

from __future__ import annotations

import httpx
import pytest
from reconcile_client import ReconcileClient, _flows, errors
from reconcile_client._wire import decode
from reconcile_client.aio import AsyncReconcileClient
from reconcile_client.models import Snapshot

from tests.clients.conftest import RELEASE, Served
from tests.clients.test_flows import EFFECT, SNAPSHOT, Driver, answer


def test_dot_identifiers_reach_the_server_as_they_are(rc: ReconcileClient) -> None:
    """`effects/.` normalised is `effects`, the list; `facts/../current` is `/current`."""
    with pytest.raises(errors.NotFound) as effect:
        rc.effect(".")
    assert effect.value.code == "effect_not_found"
    with pytest.raises(errors.NotFound) as snapshot:
        rc.snapshot("..")
    assert snapshot.value.code == "snapshot_not_found"
    with pytest.raises(errors.ValidationError) as fact:
        rc.current_fact("..")
    assert (fact.value.status, fact.value.code) == (400, "invalid_identifier")
    driver = Driver([])
    with pytest.raises(AssertionError, match="nothing scripted"):
        driver.run(_flows.escalation("."))
    (request,) = driver.sent
    assert request.path == "/api/v1/escalations/%2E"


@pytest.mark.parametrize(
    ("key", "if_match", "code"),
    [
        ("k-1\n", None, "invalid_identifier"),
        ("k\x00-1", None, "invalid_identifier"),
        (" k-1", None, "invalid_identifier"),
        ("k-1", '"42"\r\nX-Injected: 1', "invalid_if_match"),
        ("k-1", '"4é"', "invalid_if_match"),
    ],
)
def test_a_commit_no_header_can_carry_is_refused_before_sending(
    key: str, if_match: str | None, code: str
) -> None:
    """httpx refuses such a header before sending anything: treated as a lost answer it was
    retried, then reported `commit_outcome_unknown` under a key nobody could ask about (or,
    for a non-ASCII If-Match, escaped as a UnicodeEncodeError)."""
    driver = Driver([])
    with pytest.raises(errors.ValidationError) as caught:
        driver.run(
            _flows.commit(
                Snapshot.from_json(SNAPSHOT),
                action=RELEASE,
                resulting_value="released",
                idempotency_key=key,
                if_match=if_match,
                attempts=3,
            )
        )
    assert (caught.value.status, caught.value.code) == (400, code)
    assert driver.sent == [] and caught.value.idempotency_key == key


def test_a_key_read_with_its_newline_works_and_never_leaks(served: Served) -> None:
    """A key from a file or a secret often ends in a newline: it is the key. A key no header
    can carry is refused without being repeated."""
    with served.client(served.agent.key + "\n") as client:
        assert client.me().name == served.agent.name
    for bad in (served.agent.key + "\x00", "", "clé"):
        with pytest.raises(ValueError) as refused:
            ReconcileClient(served.url, bad)
        assert served.agent.key not in str(refused.value)
        with pytest.raises(ValueError):
            AsyncReconcileClient(served.url, bad)


def test_a_header_httpx_refuses_is_not_quoted_into_the_error(served: Served) -> None:
    """httpx's LocalProtocolError quotes the refused header: with your own httpx client
    carrying a bad Authorization, the error must not hand the key to a log or a model."""
    secret = served.agent.key
    http = httpx.Client(base_url=served.url, headers={"Authorization": f"Bearer {secret}\n"})
    with (
        ReconcileClient(served.url, secret, http_client=http) as client,
        pytest.raises(errors.TransportError) as caught,
    ):
        client.me()
    assert secret not in str(caught.value) and secret not in str(caught.value.as_dict())
    http.close()


def test_wait_rides_out_a_proxys_gateway_error() -> None:
    """Behind a proxy a 502/504 is an answer lost on its way (a commit counts it so): a poll
    asks again, rather than raising ServerError in the middle of an effect's settling."""
    gateway = decode(502, {"content-type": "text/html"}, b"<html>bad gateway</html>")
    done = answer(200, {**EFFECT, "status": "verified"})
    clock = iter([0.0, 0.1, 0.2])
    driver = Driver([gateway, done])
    effect = driver.run(_flows.wait("k-1", timeout=10, interval=0.5, clock=lambda: next(clock)))
    assert effect.status == "verified" and driver.slept == [0.5]
    # A 502 problem of the product's own is an answer: raised as it is.
    coded = answer(502, {"code": "owner_bad_gateway", "detail": "x"})
    with pytest.raises(errors.ServerError):
        Driver([coded]).run(_flows.wait("k-1", timeout=10, interval=0.5, clock=lambda: 0.0))
    # A poll is a read: a 500 hides no effect (unlike a commit's) and is raised.
    failed = answer(500, {"code": "internal_error", "detail": "x"})
    with pytest.raises(errors.ServerError):
        Driver([failed]).run(_flows.wait("k-1", timeout=10, interval=0.5, clock=lambda: 0.0))
