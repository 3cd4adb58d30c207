"""Seed 001's table, reproduced through GET /api/v1/facts/{fact_key}/current."""

from __future__ import annotations

import pytest

from sandbox_app.services import sandbox_fault_add
from tests.reconcile_app.facts.conftest import REGISTRY, authority, current, remember


@pytest.fixture
def seed_records(registry, agent):
    """baseline-v17 superseded by baseline-v18 (valid until 2026-12-31), registry at r18."""
    key = "baseline.math-eval"
    authority(key)
    remember(agent, key, "baseline-v17", "ckpt-0412", "registry@r17")
    remember(
        agent,
        key,
        "baseline-v18",
        "ckpt-0519",
        "registry@r18",
        valid_until="2026-12-31",
        supersedes="baseline-v17",
    )
    return key


def test_first_line_selects_the_registered_baseline(seed_records, agent):
    response = current(agent, seed_records)
    assert response.status_code == 200
    body = response.json()
    assert body["code"] == "ok"
    assert body["fact"]["value"] == "ckpt-0519"
    assert body["fact"]["memory_id"] == "baseline-v18"
    assert body["authority"]["source_revision"] == "registry@r18"


def test_superseded_v17_left_current_is_not_selected(registry, agent):
    key = "baseline.left-current"
    authority(key)
    remember(agent, key, "lc-v17", "ckpt-0412", "registry@r17")  # wrongly still current
    response = current(agent, key)
    assert response.status_code == 404
    assert response.json()["code"] == "no_current_record"
    assert response.json()["candidates"] == ["lc-v17"]
    assert response.json()["escalation_id"] is None


def test_owner_missing_is_refused_and_escalated(registry, agent):
    key = "baseline.ownerless"
    authority(key)
    remember(agent, key, "ol-v18", "ckpt-0519", "registry@r18", owner=None)
    response = current(agent, key)
    assert response.status_code == 422
    body = response.json()
    assert body["code"] == "owner_missing"
    assert body["candidates"] == ["ol-v18"]
    assert body["escalation_id"].startswith("esc_")


def test_two_current_at_r18_is_ambiguous_with_both_candidates(seed_records, agent):
    remember(
        agent, seed_records, "baseline-v18b", "ckpt-0520", "registry@r18", valid_until="2026-12-31"
    )
    response = current(agent, seed_records)
    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "authority_ambiguous"
    assert body["candidates"] == ["baseline-v18", "baseline-v18b"]
    assert body["escalation_id"].startswith("esc_")


def test_last_valid_day_is_inclusive(seed_records, agent):
    response = current(agent, seed_records, on="2026-12-31")
    assert response.status_code == 200
    assert response.json()["fact"]["value"] == "ckpt-0519"


def test_day_after_valid_until_has_no_current_record(seed_records, agent):
    response = current(agent, seed_records, on="2027-01-01")
    assert response.status_code == 404
    assert response.json()["code"] == "no_current_record"
    assert response.json()["candidates"] == ["baseline-v17", "baseline-v18"]


def test_registry_unreachable_answers_without_falling_back(seed_records, agent):
    sandbox_fault_add(source=REGISTRY, kind="unavailable", count=1)
    response = current(agent, seed_records)
    assert response.status_code == 503
    body = response.json()
    assert body["code"] == "current_authority_unavailable"
    assert "fact" not in body
    assert body["candidates"] == ["baseline-v17", "baseline-v18"]
    # The fault fired once; the registry answers again.
    assert current(agent, seed_records).status_code == 200


def test_key_no_source_answers_for_is_a_404_not_a_503(registry, agent):
    # Permanent until an operator declares a source for it: retrying cannot help, so this is
    # not a 5xx (and carries no Retry-After).
    response = current(agent, "quota.cluster-a")
    assert (response.status_code, response.json()["code"]) == (404, "no_authority_source")
    assert response.json()["authority"] is None
    assert "Retry-After" not in response


def test_registry_unreachable_says_when_to_retry(seed_records, agent):
    sandbox_fault_add(source=REGISTRY, kind="unavailable", count=1)
    response = current(agent, seed_records)
    assert (response.status_code, response.json()["code"]) == (
        503,
        "current_authority_unavailable",
    )
    assert int(response["Retry-After"]) > 0


def test_a_registry_naming_no_owner_gives_no_time_to_retry(registry, agent):
    # The owner answered: it names nobody. Asking again changes nothing until it does.
    authority("baseline.orphan", owner="")
    response = current(agent, "baseline.orphan")
    assert (response.status_code, response.json()["code"]) == (
        503,
        "current_authority_unavailable",
    )
    assert "Retry-After" not in response


def test_a_registry_that_registers_no_authority_gives_no_time_to_retry(registry, agent):
    # The owner answered 404 `authority_not_found`: an answer, not an outage. It was taken
    # for one, with Retry-After and "could not be asked".
    remember(agent, "baseline.unregistered", "un-v1", "ckpt-0001", "registry@r1")
    response = current(agent, "baseline.unregistered")
    body = response.json()
    assert (response.status_code, body["code"]) == (503, "current_authority_unavailable")
    assert "Retry-After" not in response
    assert body["detail"] == "the owner's system of record registers no authority for this key"
    assert body["authority"]["registered"] is False
    assert "registers no authority for baseline.unregistered" in body["authority"]["detail"]
    assert body["candidates"] == ["un-v1"]


def test_bad_date_is_a_clear_400(seed_records, agent):
    response = current(agent, seed_records, on="30/09/2026")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_date"


def test_a_persons_read_of_an_ambiguous_key_opens_nothing_and_names_the_open_question(
    seed_records, agent, auditor
):
    from reconcile_app.models import Escalation

    remember(
        agent, seed_records, "baseline-v18b", "ckpt-0520", "registry@r18", valid_until="2026-12-31"
    )
    looked = current(auditor, seed_records)
    assert (looked.status_code, looked.json()["code"]) == (409, "authority_ambiguous")
    assert looked.json()["escalation_id"] is None
    assert not Escalation.objects.exists()  # an auditor's look freezes no key

    opened = current(agent, seed_records).json()["escalation_id"]
    assert current(auditor, seed_records).json()["escalation_id"] == opened
    assert Escalation.objects.get().requested_by.name == agent.name
