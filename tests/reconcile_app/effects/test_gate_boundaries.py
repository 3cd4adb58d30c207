"""The gate's edges (services/effects/gate.py): the instant a commit window closes.

A snapshot offers `commit_deadline` (docs/api.md: issued_at + `commit_window_seconds`) for
each action: a commit at that instant is within the window; one a moment later is not.
"""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from tests.reconcile_app.effects.conftest import commit, reconcile


def _at(monkeypatch, moment) -> None:
    monkeypatch.setattr(timezone, "now", lambda: moment)


def test_a_commit_at_the_published_deadline_is_inside_the_window(collectible, agent, monkeypatch):
    snapshot = reconcile(agent)
    deadline = parse_datetime(snapshot["actions"]["release_collections_hold"]["commit_deadline"])
    assert deadline == parse_datetime(snapshot["issued_at"]) + timedelta(seconds=120)
    _at(monkeypatch, deadline)

    response = commit(agent, snapshot, "release_collections_hold", "released", "k-edge")

    assert response.status_code == 201, response.content


def test_a_commit_a_moment_after_the_deadline_is_expired(collectible, agent, monkeypatch):
    snapshot = reconcile(agent)
    deadline = parse_datetime(snapshot["actions"]["release_collections_hold"]["commit_deadline"])
    _at(monkeypatch, deadline + timedelta(milliseconds=1))

    response = commit(agent, snapshot, "release_collections_hold", "released", "k-late")

    assert (response.status_code, response.json()["code"]) == (412, "snapshot_expired")
