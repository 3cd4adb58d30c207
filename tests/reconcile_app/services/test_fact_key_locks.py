"""Advisory locks on names (reconcile_app/advisory_locks.py: fact keys, preference targets,
sandbox sources) are taken in one order by every holder, so two writers never wait on each
other."""

from __future__ import annotations

from reconcile_app import advisory_locks
from reconcile_app.advisory_locks import lock_ids, name_lock_id


def test_locks_are_taken_once_each_in_the_order_of_their_ids(monkeypatch):
    # Sorting by key text took two colliding keys' one lock at a place that depended on
    # the other keys each writer held: one writer could take it before a lock the other
    # held, the other after.
    ids = {"zeta": 1, "alpha": 2, "beta": 1}  # zeta and beta collide
    monkeypatch.setattr(advisory_locks, "name_lock_id", ids.__getitem__)
    assert lock_ids({"zeta", "alpha", "beta"}) == [1, 2]


def test_a_lock_id_is_a_signed_32_bit_integer_and_stable():
    for key in ("baseline.eval-1", "x" * 200, "ünï"):
        lock_id = name_lock_id(key)
        assert -(2**31) <= lock_id < 2**31
        assert lock_id == name_lock_id(key)
    assert name_lock_id("a") != name_lock_id("b")
