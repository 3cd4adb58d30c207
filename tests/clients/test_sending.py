"""What the client puts on the wire is what it was asked to send: an identifier reaches the
server as it is (`.` and `..` are not normalised into another route)."""

from __future__ import annotations

import pytest
from reconcile_client import ReconcileClient, _flows, errors

from tests.clients.test_flows import Driver


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
