"""The fact keys' advisory locks (services/escalations.fact_keys_held) are taken in one order
by every holder, so two writers never wait on each other."""

from __future__ import annotations

from reconcile_app.services import escalations
from reconcile_app.services.escalations import fact_key_lock_id, fact_key_lock_ids


def test_locks_are_taken_once_each_in_the_order_of_their_ids(monkeypatch):
    # Sorting by key text took two colliding keys' one lock at a place that depended on
    # the other keys each writer held: one writer could take it before a lock the other
    # held, the other after.
    ids = {"zeta": 1, "alpha": 2, "beta": 1}  # zeta and beta collide
    monkeypatch.setattr(escalations, "fact_key_lock_id", ids.__getitem__)
    assert fact_key_lock_ids({"zeta", "alpha", "beta", ""}) == [1, 2]


def test_a_lock_id_is_a_signed_32_bit_integer_and_stable():
    for key in ("baseline.eval-1", "x" * 200, "ünï"):
        lock_id = fact_key_lock_id(key)
        assert -(2**31) <= lock_id < 2**31
        assert lock_id == fact_key_lock_id(key)
    assert fact_key_lock_id("a") != fact_key_lock_id("b")
