"""The soak's invariants, given ledgers that break them: each check must say so."""

from __future__ import annotations

from drills_app.soak.checks import (
    Ledgers,
    MemorySeries,
    OwnerApplication,
    ProductEffect,
    duplicated_check,
    lost_check,
    memory_check,
    memory_verdict,
    readback_check,
    server_errors_check,
)
from drills_app.soak.traffic import ServerErrorAnswer, Traffic, route_of


def ledgers(
    *,
    effects: list[tuple[str, str, str]],
    owner: list[tuple[str, str, bool]],
    versions: dict[str, int],
    gate_accepted: set[str] | None = None,
) -> Ledgers:
    keys = {key: subject for key, subject, _ in effects}
    return Ledgers(
        gate_accepted=frozenset(keys if gate_accepted is None else gate_accepted),
        sent=keys,
        effects=[ProductEffect(*row) for row in effects],
        owner=[OwnerApplication(*row) for row in owner],
        versions=versions,
    )


# Two accounts: a-1 written twice (versions 1 → 3), a-2 once but the write was dropped.
HEALTHY = ledgers(
    effects=[
        ("k1", "a-1", "verified"),
        ("k2", "a-1", "verified"),
        ("k3", "a-2", "postcondition_failed"),
    ],
    owner=[("k1", "a-1", True), ("k2", "a-1", True), ("k3", "a-2", False)],
    versions={"a-1": 3, "a-2": 1},
)


def test_a_healthy_soak_passes_every_effect_check():
    for check in (lost_check, duplicated_check, readback_check):
        finding = check(HEALTHY)
        assert finding.passed, finding


def test_a_key_the_owner_applied_twice_is_a_duplicate():
    twice = ledgers(
        effects=[("k1", "a-1", "verified")],
        owner=[("k1", "a-1", True), ("k1", "a-1", True)],
        versions={"a-1": 3},
    )
    finding = duplicated_check(twice)
    assert not finding.passed
    assert "k1: executed 2 times by the owner" in finding.details
    assert "a-1: the record moved 2 times for 2 applied keys" not in finding.details


def test_a_record_that_moved_more_often_than_its_ledger_says_is_a_duplicate():
    # The owner's ledger holds k1 once, but the record moved twice: applied outside the ledger.
    moved_twice = ledgers(
        effects=[("k1", "a-1", "verified")], owner=[("k1", "a-1", True)], versions={"a-1": 3}
    )
    finding = duplicated_check(moved_twice)
    assert not finding.passed
    assert finding.details == ["a-1: the record moved 2 times for 1 applied keys"]


def test_an_effect_the_gate_accepted_but_nobody_recorded_is_lost():
    finding = lost_check(ledgers(effects=[], owner=[], versions={}, gate_accepted={"k9"}))
    assert not finding.passed
    assert finding.details == ["k9: the gate recorded it, the product's ledger has no such effect"]


def test_an_effect_verified_without_the_owner_executing_it_is_lost():
    finding = lost_check(
        ledgers(effects=[("k1", "a-1", "verified")], owner=[], versions={"a-1": 1})
    )
    assert not finding.passed
    assert "k1: verified, but the owner never executed it" in finding.details


def test_an_effect_resolved_not_executed_that_the_owner_applied_is_lost():
    finding = lost_check(
        ledgers(
            effects=[("k1", "a-1", "not_executed")],
            owner=[("k1", "a-1", True)],
            versions={"a-1": 2},
        )
    )
    assert not finding.passed
    assert "k1: not_executed, but the owner applied it" in finding.details


def test_an_owner_execution_the_product_never_heard_of_is_lost():
    finding = lost_check(
        ledgers(effects=[], owner=[("k7", "a-1", True)], versions={"a-1": 2}, gate_accepted=set())
    )
    assert not finding.passed
    assert finding.details == ["k7: the owner executed it, the product has no such effect"]


def test_effects_still_unknown_or_unread_after_the_drain_are_listed():
    pending = ledgers(
        effects=[("k1", "a-1", "unknown"), ("k2", "a-2", "accepted"), ("k3", "a-3", "verified")],
        owner=[("k1", "a-1", True), ("k2", "a-2", True), ("k3", "a-3", True)],
        versions={"a-1": 2, "a-2": 2, "a-3": 2},
    )
    finding = readback_check(pending)
    assert not finding.passed
    assert finding.details == ["k1 (a-1): still unknown", "k2 (a-2): still accepted"]
    assert finding.summary == "accepted 1, unknown 1, verified 1"


def test_a_readback_that_disagrees_with_the_owner_fails():
    wrong = ledgers(
        effects=[("k1", "a-1", "verified"), ("k2", "a-2", "postcondition_failed")],
        owner=[("k1", "a-1", False), ("k2", "a-2", True)],
        versions={"a-1": 1, "a-2": 2},
    )
    finding = readback_check(wrong)
    assert not finding.passed
    assert finding.details == [
        "k1: verified, but the owner did not apply it",
        "k2: postcondition_failed, but the owner applied it",
    ]


def _error(status: int, code: str) -> ServerErrorAnswer:
    return ServerErrorAnswer(12.5, "POST", "/api/v1/effects", status, code, "")


def test_a_relayed_owner_outage_is_counted_apart_from_the_products_own_5xx():
    relayed = server_errors_check([_error(503, "owner_unavailable")])
    assert relayed.passed
    assert "1 x 503 owner_unavailable" in relayed.summary
    failing = server_errors_check(
        [_error(503, "owner_unavailable"), _error(503, "database_unavailable"), _error(502, "")]
    )
    assert not failing.passed
    assert failing.summary.startswith("2 from the product")
    assert "database_unavailable POST /api/v1/effects" in failing.details[0]


def _series(*mb: float, every: float = 60.0) -> MemorySeries:
    return MemorySeries("web worker", 42, [(i * every, int(m * 1024)) for i, m in enumerate(mb)])


def _verdict(series: MemorySeries):
    return memory_verdict(
        series,
        warmup_seconds=60,
        min_span_seconds=120,
        growth_fraction=0.10,
        growth_floor_kib=5 * 1024,
    )


def test_memory_that_settles_after_warm_up_is_flat():
    # The first minute (imports, caches) is warm-up; from then on +2 MB on 100 is flat.
    verdict = _verdict(_series(60, 100, 101, 101.5, 102))
    assert verdict.judged and verdict.flat


def test_memory_that_keeps_growing_is_reported():
    verdict = _verdict(_series(60, 100, 110, 120, 130))
    assert verdict.judged and not verdict.flat
    finding = memory_check([verdict])
    assert not finding.passed
    assert finding.details == ["web worker [42]: 100.0 → 130.0 MB"]


def test_a_process_that_lived_too_short_is_not_judged():
    verdict = _verdict(_series(60, 100, 200))
    assert not verdict.judged
    assert memory_check([verdict]).judged is False


def test_requests_are_counted_per_route_and_status_class():
    traffic = Traffic()
    for path, status in (
        ("/api/v1/effects/soak-1-c1", 200),
        ("/api/v1/effects/soak-1-c2", 200),
        ("/api/v1/reconcile", 201),
        ("/api/v1/effects", 503),
    ):
        method = "GET" if path.count("/") == 4 else "POST"
        traffic.answered(
            who="agents",
            method=method,
            path=path,
            status=status,
            seconds=0.1,
            body={"code": "owner_unavailable"},
        )
    assert traffic.by_route()["GET /api/v1/effects/{key}"] == {200: 2}
    assert traffic.by_status_class()["agents"] == {"2xx": 3, "5xx": 1}
    assert [error.code for error in traffic.server_errors] == ["owner_unavailable"]
    assert route_of("PUT", "/api/v1/sandbox/case-service/records/a/b") == (
        "PUT /api/v1/sandbox/{source}/records/…"
    )
