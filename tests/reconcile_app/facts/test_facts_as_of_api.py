"""`GET /api/v1/facts/{fact_key}/current?as_of=`: the rule over what was recorded by then.

Times are taken from the rows themselves (a record's `recorded_at`, an authority change's
`at`), so "before" and "after" never depend on how fast the test runs.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from reconcile_app.canonical import rfc3339
from reconcile_app.models import Escalation, MemoryRecord, MemoryStatusEvent
from reconcile_app.services.escalations import escalation_decide
from reconcile_app.services.quarantine import quarantine_apply, quarantine_create
from sandbox_app.models import SandboxAuthorityChange
from tests.reconcile_app.facts.conftest import authority, remember

KEY = "baseline.math-eval"
ON = "2026-09-30"


def recorded(memory_id: str) -> datetime:
    return MemoryRecord.objects.get(memory_id=memory_id).recorded_at


def authority_changed(revision: str) -> datetime:
    return SandboxAuthorityChange.objects.get(fact_key=KEY, source_revision=revision).at


def just_before(moment: datetime) -> datetime:
    return moment - timedelta(microseconds=1)


def believed(persona, as_of: datetime | str, on: str | None = ON, key: str = KEY):
    params = {"as_of": as_of if isinstance(as_of, str) else rfc3339(as_of)}
    if on is not None:
        params["on"] = on
    return persona.client.get(f"/api/v1/facts/{key}/current", params)


@pytest.fixture
def rebaselined(registry, agent) -> str:
    """The registry at r17 with v17; then r18, and v18 superseding v17."""
    authority(KEY, revision="registry@r17")
    remember(agent, KEY, "baseline-v17", "ckpt-0412", "registry@r17")
    authority(KEY, revision="registry@r18")
    remember(agent, KEY, "baseline-v18", "ckpt-0519", "registry@r18", supersedes="baseline-v17")
    return KEY


def test_before_the_supersession_the_old_record_was_the_current_one(rebaselined, agent):
    response = believed(agent, just_before(authority_changed("registry@r18")))

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["fact"]["memory_id"], body["fact"]["status"]) == ("baseline-v17", "current")
    assert body["fact"]["value"] == "ckpt-0412"
    assert body["authority"]["source_revision"] == "registry@r17"
    assert body["candidates"] == ["baseline-v17"]  # v18 was not recorded yet
    # Today, v17 is superseded: the answer above is history, not the present.
    assert MemoryRecord.objects.get(memory_id="baseline-v17").status == "superseded"


def test_after_the_supersession_the_new_record_is_the_current_one(rebaselined, agent):
    body = believed(agent, recorded("baseline-v18")).json()
    assert (body["code"], body["fact"]["memory_id"]) == ("ok", "baseline-v18")
    assert body["authority"]["source_revision"] == "registry@r18"
    assert body["candidates"] == ["baseline-v18"]


def test_between_the_owners_change_and_the_new_record_nothing_was_current(rebaselined, agent):
    # The owner had moved to r18; only v17 (at r17) was recorded: the seed's rule says so.
    between = authority_changed("registry@r18") + timedelta(microseconds=1)
    assert between < recorded("baseline-v18")
    response = believed(agent, between)
    assert response.status_code == 404
    body = response.json()
    assert (body["code"], body["candidates"]) == ("no_current_record", ["baseline-v17"])
    assert body["authority"]["source_revision"] == "registry@r18"


def test_a_record_recorded_later_is_invisible(rebaselined, agent):
    body = believed(agent, just_before(recorded("baseline-v18"))).json()
    assert "baseline-v18" not in body["candidates"]


def test_the_owners_authority_then_not_now(registry, agent):
    authority(KEY, owner="eval-registry", revision="registry@r18")
    remember(agent, KEY, "baseline-v18", "ckpt-0519", "registry@r18")
    authority(KEY, owner="eval-team", revision="registry@r18")
    handed_over = SandboxAuthorityChange.objects.get(fact_key=KEY, owner="eval-team").at

    before = believed(agent, just_before(handed_over))
    after = believed(agent, handed_over)

    assert before.status_code == 200
    assert before.json()["authority"]["owner"] == "eval-registry"
    # The record names eval-registry as owner: once the key moved, it no longer qualified.
    assert after.status_code == 404
    assert after.json()["authority"]["owner"] == "eval-team"


def test_before_anything_was_recorded_nothing_was_known(rebaselined, agent):
    response = believed(agent, just_before(recorded("baseline-v17")))
    assert response.status_code == 404
    assert response.json()["candidates"] == []


# --- History is not a live ambiguity ---------------------------------------------------------


@pytest.fixture
def settled_ambiguity(registry, agent, reviewer) -> Escalation:
    """Two records at r18; the live question opened an escalation; a reviewer kept v18."""
    authority(KEY)
    remember(agent, KEY, "math-eval-v18", "ckpt-0519", "registry@r18")
    remember(agent, KEY, "math-eval-v18b", "ckpt-0520", "registry@r18")
    opened = agent.client.get(f"/api/v1/facts/{KEY}/current", {"on": ON}).json()
    escalation = escalation_decide(
        escalation_id=opened["escalation_id"],
        reviewer=reviewer.user,
        approve=True,
        rationale="the registry's own record is v18",
        selected_ref="math-eval-v18",
    )
    return escalation


def retired_at(memory_id: str) -> datetime:
    return MemoryStatusEvent.objects.get(memory__memory_id=memory_id, status="historical_only").at


def test_an_ambiguity_in_the_past_is_reported_and_never_escalated(settled_ambiguity, agent):
    response = believed(agent, just_before(retired_at("math-eval-v18b")))

    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "authority_ambiguous"
    assert body["candidates"] == ["math-eval-v18", "math-eval-v18b"]
    assert body["escalation_id"] is None
    assert Escalation.objects.count() == 1  # only the one the live question opened


def test_after_the_decision_the_retired_record_no_longer_counts(settled_ambiguity, agent):
    body = believed(agent, retired_at("math-eval-v18b")).json()
    assert (body["code"], body["fact"]["memory_id"]) == ("ok", "math-eval-v18")


def test_an_as_of_question_writes_nothing(registry, agent):
    authority(KEY)
    remember(agent, KEY, "math-eval-v18", "ckpt-0519", "registry@r18")
    remember(agent, KEY, "math-eval-v18b", "ckpt-0520", "registry@r18")
    counts = (Escalation.objects.count(), MemoryStatusEvent.objects.count())

    with CaptureQueriesContext(connection) as queries:
        response = believed(agent, timezone.now())

    assert response.status_code == 409  # ambiguous now: the live question would escalate
    writes = [
        query["sql"]
        for query in queries.captured_queries
        if query["sql"].lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE"))
    ]
    assert writes == []
    assert (Escalation.objects.count(), MemoryStatusEvent.objects.count()) == counts


# --- Questions that cannot be answered -------------------------------------------------------


@pytest.mark.parametrize(
    ("as_of", "on", "status", "code"),
    [
        ("last tuesday", ON, 400, "invalid_parameter"),
        ("2026-09-30T25:00:00Z", ON, 400, "invalid_parameter"),
        # A day is `on`'s question; as_of's midnight in which zone was never said.
        ("2026-09-30", ON, 400, "invalid_parameter"),
        ("2999-01-01T00:00:00Z", ON, 422, "as_of_in_future"),
        ("2026-09-30T12:00:00Z", "30/09/2026", 400, "invalid_date"),
        # Python's date.fromisoformat reads these too; `on` is YYYY-MM-DD, as echoed.
        ("2026-09-30T12:00:00Z", "20260930", 400, "invalid_date"),
        ("2026-09-30T12:00:00Z", "2026-W40-3", 400, "invalid_date"),
    ],
)
def test_bad_questions_are_refused_with_the_question_echoed(
    rebaselined, agent, as_of, on, status, code
):
    response = believed(agent, as_of, on=on)
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["code"] == code
    assert (body["as_of"], body["on"]) == (as_of, on)
    # API.md: "every non-200 body has `candidates`" (none asked about: nothing opened).
    assert (body["candidates"], body["escalation_id"]) == ([], None)


def test_a_time_a_moment_ahead_is_already_the_future(rebaselined, agent):
    response = believed(agent, timezone.now() + timedelta(seconds=5))
    assert (response.status_code, response.json()["code"]) == (422, "as_of_in_future")


def test_the_answer_echoes_the_question_in_utc(rebaselined, agent):
    asked = recorded("baseline-v18").astimezone(timezone.get_fixed_timezone(120))
    body = believed(agent, asked.isoformat()).json()
    assert body["as_of"] == rfc3339(recorded("baseline-v18"))
    assert body["as_of"].endswith("Z")
    assert body["on"] == ON
    assert body["authority"]["as_of"] == body["as_of"]


def test_without_on_the_rule_applies_on_the_as_of_date(rebaselined, agent):
    asked = timezone.now() - timedelta(days=3)
    body = believed(agent, asked, on=None).json()
    assert body["on"] == asked.date().isoformat()  # the fact timezone is UTC here


def test_the_present_question_echoes_as_of_null(rebaselined, agent):
    body = agent.client.get(f"/api/v1/facts/{KEY}/current", {"on": ON}).json()
    assert (body["as_of"], body["on"]) == (None, ON)


# --- Quarantine is a present-day control -----------------------------------------------------


@pytest.fixture
def quarantined(rebaselined, operator) -> str:
    quarantine = quarantine_create(
        scope="memory_class", target="operational", reason="poisoned summaries", actor=operator.user
    )
    quarantine_apply(quarantine_id=quarantine.quarantine_id)
    return rebaselined


def test_an_agent_cannot_read_around_a_quarantine_by_asking_about_the_past(quarantined, agent):
    response = believed(agent, just_before(timezone.now()))
    assert response.status_code == 423
    body = response.json()
    assert (body["code"], body["candidates"]) == ("memory_class_quarantined", ["baseline-v18"])
    assert body["as_of"] and body["on"] == ON


@pytest.mark.parametrize("persona_name", ["auditor", "operator"])
def test_people_read_history_under_quarantine_with_the_class_named(
    quarantined, request, persona_name
):
    persona = request.getfixturevalue(persona_name)
    body = believed(persona, recorded("baseline-v18")).json()
    assert (body["code"], body["fact"]["memory_id"]) == ("ok", "baseline-v18")
    assert body["quarantined_classes"] == ["operational"]
    # The live question stays refused to them too.
    present = persona.client.get(f"/api/v1/facts/{KEY}/current", {"on": ON})
    assert present.status_code == 423
