"""What the client puts on the wire is what it was asked to send: an identifier reaches the
server as it is (`.` and `..` are not normalised into another route), and a value no header can
carry is refused before sending (not reported as a lost answer)."""

from __future__ import annotations

import pytest
from reconcile_client import ReconcileClient, _flows, errors
from reconcile_client.models import Snapshot

from tests.clients.conftest import RELEASE
from tests.clients.test_flows import SNAPSHOT, Driver


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
