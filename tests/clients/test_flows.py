"""The sans-IO core without a server: the flows driven by hand, step by step, so the retry
and polling rules are pinned exactly (what is sent, with which key, after which pause), and
the error table maps every code it names to its class."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from reconcile_client import _flows, errors
from reconcile_client._wire import Answer, Flow, HttpRequest, NoAnswer, Send, Sleep, decode
from reconcile_client.models import Effect

EFFECT = {
    "idempotency_key": "k-1",
    "status": "accepted",
    "receipt": {"receipt_id": "rcpt-1", "resulting_version": 43},
    "snapshot_id": "snap_1",
    "action": "release_collections_hold",
    "subject": "account-17",
    "field": "collections_status",
    "resulting_value": "released",
    "expected_version": 42,
    "resulting_version": 43,
    "outcome": {},
}
SNAPSHOT = {
    "snapshot_id": "snap_1",
    "subject": "account-17",
    "decision_class": "collections-contact-release",
    "completeness": "complete",
    "decision": {"result": "allow", "permitted_actions": ["release_collections_hold"]},
    "fields": {"collections_status": {"source": "case-service", "status": "ok", "version": 42}},
    "actions": {"release_collections_hold": {"field": "collections_status", "if_match": '"42"'}},
}


def answer(status: int, body: Any, **headers: str) -> Answer:
    return decode(status, headers, json.dumps(body).encode())


class Driver:
    """Runs a flow against scripted replies, keeping every step it asked for."""

    def __init__(self, replies: list[Answer | NoAnswer]) -> None:
        self.replies: Iterator[Answer | NoAnswer] = iter(replies)
        self.sent: list[HttpRequest] = []
        self.slept: list[float] = []

    def run(self, flow: Flow[Any]) -> Any:
        reply: Any = None
        try:
            while True:
                step = flow.send(reply)
                if isinstance(step, Sleep):
                    self.slept.append(step.seconds)
                    reply = None
                else:
                    assert isinstance(step, Send)
                    self.sent.append(step.request)
                    reply = next(self.replies, None)
                    assert reply is not None, f"nothing scripted for {step.request}"
        except StopIteration as done:
            return done.value


def commit(driver: Driver, attempts: int = 3, key: str | None = "k-1") -> Any:
    from reconcile_client.models import Snapshot

    return driver.run(
        _flows.commit(
            Snapshot.from_json(SNAPSHOT),
            action="release_collections_hold",
            resulting_value="released",
            idempotency_key=key,
            if_match=None,
            attempts=attempts,
        )
    )


def test_a_commit_carries_the_snapshots_if_match_and_one_key() -> None:
    driver = Driver([answer(201, EFFECT)])
    effect = commit(driver, key=None)
    (request,) = driver.sent
    assert request.headers["If-Match"] == '"42"'
    assert request.headers["Idempotency-Key"].startswith("rc-")
    assert request.body == {
        "snapshot_id": "snap_1",
        "action": "release_collections_hold",
        "resulting_value": "released",
    }
    assert effect.status == "accepted" and not effect.replayed


def test_lost_answers_are_retried_with_the_same_key_then_reported_unknown() -> None:
    lost = NoAnswer(reason="ReadTimeout", timed_out=True)
    driver = Driver([lost, lost, lost])
    with pytest.raises(errors.CommitOutcomeUnknown) as caught:
        commit(driver, attempts=3)
    assert caught.value.idempotency_key == "k-1" and caught.value.status is None
    assert [request.headers["Idempotency-Key"] for request in driver.sent] == ["k-1"] * 3
    assert driver.slept == [0.2, 0.5]


def test_a_key_still_in_flight_after_a_lost_answer_is_asked_again() -> None:
    busy = answer(409, {"code": "idempotency_key_in_use", "detail": "in flight"})
    replayed = answer(200, EFFECT, **{"Idempotent-Replayed": "true"})
    driver = Driver([NoAnswer(reason="timeout", timed_out=True), busy, replayed])
    effect = commit(driver)
    assert effect.replayed and len(driver.sent) == 3
    # Without a lost attempt of its own, in flight is someone else's request: an error.
    with pytest.raises(errors.IdempotencyKeyInUse):
        commit(Driver([busy]))


def test_an_unknown_outcome_is_returned_never_sent_again() -> None:
    driver = Driver([answer(202, {**EFFECT, "status": "unknown", "receipt": None})])
    effect = commit(driver)
    assert effect.status == "unknown" and len(driver.sent) == 1


def test_wait_polls_until_final_honouring_retry_after() -> None:
    pending = answer(200, EFFECT, **{"Retry-After": "3"})
    done = answer(200, {**EFFECT, "status": "verified"})
    clock = iter([0.0, 0.1, 0.2, 0.3])
    driver = Driver([pending, done])
    effect = driver.run(_flows.wait("k-1", timeout=10, interval=0.5, clock=lambda: next(clock)))
    assert effect.status == "verified"
    assert driver.slept == [3.0]
    assert [request.path for request in driver.sent] == ["/api/v1/effects/k-1"] * 2


def test_wait_returns_the_effect_as_it_stands_at_the_deadline() -> None:
    unknown = answer(200, {**EFFECT, "status": "unknown"})
    clock = iter([0.0, 0.4, 1.2])
    driver = Driver([unknown, NoAnswer(reason="reset", timed_out=False)])
    effect = driver.run(_flows.wait("k-1", timeout=1.0, interval=0.5, clock=lambda: next(clock)))
    assert isinstance(effect, Effect) and effect.status == "unknown"  # a lost poll is no news
    assert driver.slept == [0.5]


@pytest.mark.parametrize(("code", "cls"), sorted(errors.BY_CODE.items()))
def test_each_code_of_the_table_raises_its_class(code: str, cls: type) -> None:
    status = 403 if issubclass(cls, errors.Forbidden) else 409
    raised = _raise(answer(status, {"code": code, "detail": "why", "title": "t"}))
    assert type(raised) is cls and (raised.code, raised.detail) == (code, "why")


def test_an_unknown_code_falls_back_to_its_status_family() -> None:
    for status, cls in errors.BY_STATUS.items():
        assert type(_raise(answer(status, {"code": "brand_new"}))) is cls
    gateway = _raise(decode(502, {"content-type": "text/html"}, b"<html>bad gateway</html>"))
    assert type(gateway) is errors.ServerError and gateway.code == "http_502"
    throttled = _raise(answer(429, {"code": "throttled"}, **{"Retry-After": "7"}))
    assert isinstance(throttled, errors.RateLimited) and throttled.retry_after == 7.0


def _raise(reply: Answer) -> errors.ReconcileError:
    driver = Driver([reply])
    with pytest.raises(errors.ReconcileError) as caught:
        driver.run(_flows.effect("k-1"))
    return caught.value


def test_a_key_in_flight_past_the_budget_after_a_loss_is_an_unknown_outcome() -> None:
    """Our own lost attempt may still land: that is `CommitOutcomeUnknown` with the key to
    ask about, not `IdempotencyKeyInUse` (a 409, which reads as "reconcile again")."""
    busy = answer(409, {"code": "idempotency_key_in_use"}, **{"Retry-After": "2"})
    driver = Driver([NoAnswer(reason="timeout", timed_out=True), busy, busy, busy, busy])
    with pytest.raises(errors.CommitOutcomeUnknown) as caught:
        commit(driver, attempts=3)
    assert caught.value.idempotency_key == "k-1"
    assert [request.headers["Idempotency-Key"] for request in driver.sent] == ["k-1"] * 5
    assert driver.slept == [0.2, 2.0, 2.0, 2.0]


def test_every_problem_a_commit_raises_carries_its_key() -> None:
    """After 503 owner_unavailable the same key is a new attempt (docs/api.md): the agent
    needs it, not a new one."""
    down = answer(503, {"code": "owner_unavailable"}, **{"Retry-After": "5"})
    with pytest.raises(errors.OwnerUnavailable) as caught:
        commit(Driver([down]), key=None)
    assert caught.value.idempotency_key is not None
    assert caught.value.idempotency_key.startswith("rc-") and caught.value.retry_after == 5.0
    assert caught.value.as_dict()["idempotency_key"] == caught.value.idempotency_key  # MCP
    refused = answer(409, {"code": "owner_refused", "detail": "event-sourced"})
    with pytest.raises(errors.OwnerRefused) as owner:
        commit(Driver([refused]))
    assert owner.value.idempotency_key == "k-1"
    assert _raise(refused).idempotency_key is None  # not a commit: no key


def test_a_key_no_header_can_carry_is_refused_before_sending() -> None:
    driver = Driver([])
    with pytest.raises(errors.ValidationError) as caught:
        commit(driver, key="clé-1")
    assert (caught.value.status, caught.value.code) == (400, "invalid_identifier")
    assert caught.value.idempotency_key == "clé-1" and driver.sent == []


def test_a_commit_that_cannot_read_its_snapshot_again_names_its_key() -> None:
    """An escalate snapshot is read again before committing: its refusal carries the key."""
    from reconcile_client.models import Snapshot

    escalated = {**SNAPSHOT, "decision": {"result": "escalate"}, "actions": {}}
    gone = answer(404, {"code": "snapshot_not_found"})
    with pytest.raises(errors.NotFound) as caught:
        Driver([gone]).run(
            _flows.commit(
                Snapshot.from_json(escalated),
                action="release_collections_hold",
                resulting_value="released",
                idempotency_key="k-9",
                if_match=None,
                attempts=3,
            )
        )
    assert caught.value.idempotency_key == "k-9"


def test_wait_rides_out_throttling_and_unavailability() -> None:
    throttled = answer(429, {"code": "throttled"}, **{"Retry-After": "1"})
    unavailable = answer(503, {"code": "database_unavailable"}, **{"Retry-After": "2"})
    done = answer(200, {**EFFECT, "status": "verified"})
    clock = iter([0.0, 0.1, 0.2, 0.3])
    driver = Driver([throttled, unavailable, done])
    effect = driver.run(_flows.wait("k-1", timeout=10, interval=0.5, clock=lambda: next(clock)))
    assert effect.status == "verified" and driver.slept == [1.0, 2.0]
    # Still throttled at the deadline with nothing seen: no effect to return.
    clock = iter([0.0, 5.0])
    with pytest.raises(errors.TransportError):
        Driver([throttled]).run(
            _flows.wait("k-1", timeout=1, interval=0.5, clock=lambda: next(clock))
        )


def test_problem_fields_the_docs_name_are_attributes() -> None:
    ambiguous = _raise(answer(409, {"code": "authority_ambiguous", "escalation_id": "esc_1"}))
    assert isinstance(ambiguous, errors.AuthorityAmbiguous)
    assert ambiguous.escalation_id == "esc_1"
    inactive = _raise(answer(422, {"code": "contract_version_inactive", "active_version": "7.3"}))
    assert isinstance(inactive, errors.ContractVersionInactive)
    assert inactive.active_version == "7.3"
    value = _raise(answer(403, {"code": "value_not_permitted", "permitted_values": ["a", "b"]}))
    assert isinstance(value, errors.ValueNotPermitted)
    assert value.permitted_values == ["a", "b"]


@pytest.mark.parametrize(
    ("lost", "status"),
    [
        # Behind a proxy, 502/504 means the server's answer was lost, not that nothing ran.
        (decode(504, {"content-type": "text/html"}, b"<html>gateway timeout</html>"), 504),
        # A 500 may come after the owner took the command: raised as ServerError ("try
        # later"), it invited a commit under a new key.
        (answer(500, {"code": "internal_error", "detail": "Internal server error"}), 500),
    ],
)
def test_an_answer_lost_or_failed_on_a_commit_is_sent_again_then_unknown(
    lost: Answer, status: int
) -> None:
    """The same key goes again; past the attempts the outcome is unknown (ask `effect(key)`)."""
    replayed = answer(200, EFFECT, **{"Idempotent-Replayed": "true"})
    driver = Driver([lost, replayed])
    assert commit(driver).replayed
    assert [request.headers["Idempotency-Key"] for request in driver.sent] == ["k-1"] * 2
    with pytest.raises(errors.CommitOutcomeUnknown) as caught:
        commit(Driver([lost, lost]), attempts=2)
    assert caught.value.idempotency_key == "k-1" and f"HTTP {status}" in caught.value.detail


@pytest.mark.parametrize(
    "not_yet",
    [
        answer(429, {"code": "throttled"}, **{"Retry-After": "3"}),
        answer(503, {"code": "database_unavailable"}, **{"Retry-After": "3"}),
    ],
)
def test_a_retry_throttled_or_unavailable_after_a_loss_asks_again(not_yet: Answer) -> None:
    """After a lost attempt, a 429 or a 503 of Reconcile's own says nothing of that attempt
    (it may have been executed): raised as RateLimited / Unavailable ("try later"), it led an
    agent to commit again under a new key (examples/agent.py reconciled again). The same key
    goes again after Retry-After; past the budget the outcome is unknown."""
    lost = NoAnswer(reason="ReadTimeout", timed_out=True)
    replayed = answer(200, EFFECT, **{"Idempotent-Replayed": "true"})
    driver = Driver([lost, not_yet, replayed])
    assert commit(driver).replayed
    assert [request.headers["Idempotency-Key"] for request in driver.sent] == ["k-1"] * 3
    assert driver.slept == [0.2, 3.0]
    with pytest.raises(errors.CommitOutcomeUnknown) as caught:
        commit(Driver([lost, not_yet, not_yet, not_yet, not_yet]), attempts=3)
    assert caught.value.idempotency_key == "k-1"
    # Without a lost attempt, nothing was done: the problem is raised as it is.
    with pytest.raises((errors.RateLimited, errors.Unavailable)):
        commit(Driver([not_yet]))
    # owner_unavailable says the owner never took the command: raised, to send again.
    down = answer(503, {"code": "owner_unavailable"})
    with pytest.raises(errors.OwnerUnavailable):
        commit(Driver([lost, down]))


def test_an_owners_receipt_is_read_with_what_it_says_and_nothing_more() -> None:
    """The receipt is the owner's own body, passed through as stored: the server takes it as
    proof with the key, subject, field and resulting_version alone (the schema's receipt_id
    is optional), and never checks its other members. A receipt without `receipt_id`, or with
    a `committed_at` in the owner's own form, made every read of the effect raise KeyError or
    ValueError: the agent could neither see its commit nor wait for it."""
    receipt = {
        "idempotency_key": "k-1",
        "subject": "account-17",
        "field": "collections_status",
        "resulting_version": 43,
        "committed_at": 1733520000,
    }
    effect = commit(Driver([answer(201, {**EFFECT, "receipt": receipt})]))
    assert effect.receipt is not None
    assert (effect.receipt.receipt_id, effect.receipt.resulting_version) == (None, 43)
    assert effect.receipt.committed_at is None  # not a time: kept in `.raw` as sent
    assert effect.receipt.raw["committed_at"] == 1733520000
    stamped = {**receipt, "receipt_id": "r-9", "committed_at": "2026-12-06T21:00:00Z"}
    again = Effect.from_json({**EFFECT, "receipt": stamped})
    assert again.receipt is not None and again.receipt.receipt_id == "r-9"
    assert again.receipt.committed_at is not None and again.receipt.committed_at.hour == 21


def test_an_empty_idempotency_key_is_refused_not_replaced() -> None:
    driver = Driver([])
    with pytest.raises(errors.ValidationError) as caught:
        commit(driver, key="")
    assert caught.value.code == "invalid_identifier" and driver.sent == []
