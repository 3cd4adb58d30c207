"""Contract versions go live only through their release gates (docs/api.md, "Contract
versions"): draft → active → retired, one active version per class, activation by reviewers
with a rationale, rollback by activating an earlier version, every transition audited."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from reconcile_app.models import AuditEvent, Contract, ContractActivation
from reconcile_app.services.contract_lifecycle import contract_activation_run
from tests.conftest import COLLECTIONS
from tests.factories import write_yaml
from tests.reconcile_app.effects.conftest import collectible, commit, reconcile  # noqa: F401
from tests.reconcile_app.effects.test_gate import TIGHTENED

CONTRACTS = "/api/v1/contracts"
# 7.4 denies what 7.3 allowed: an account in standard collections.
DENIES_COLLECT = TIGHTENED.replace(
    'fields.collections_status == "hold"', 'fields.collections_status == "collect"'
)
# A rule that errors whenever the optional complaint_status is absent (no `has()`).
BREAKS_WITHOUT_COMPLAINT = TIGHTENED.replace('"7.4"', '"7.6"').replace(
    "deny: [",
    "escalate: [{when: 'fields.complaint_status == \"open\"', code: complaint}]\n  deny: [",
)


def load(tmp_path, text: str, name: str = "next.yaml", *flags: str) -> str:
    out = StringIO()
    call_command("load_contracts", str(write_yaml(tmp_path, name, text)), *flags, stdout=out)
    return out.getvalue()


def status_of(version: str) -> str:
    return Contract.objects.get(decision_class=COLLECTIONS, version=version).status


def activate(persona, version: str, rationale: str = "reviewed the diff", **extra: Any):
    return persona.post(
        f"{CONTRACTS}/{COLLECTIONS}/{version}/activate", {"rationale": rationale}, **extra
    )


def actions_on(version: str) -> list[str]:
    return list(
        AuditEvent.objects.filter(object_kind="contract", object_ref=f"{COLLECTIONS}@{version}")
        .order_by("at", "id")
        .values_list("action", flat=True)
    )


# --- Loading ------------------------------------------------------------------------------------


def test_loading_a_version_runs_its_gates_and_retires_the_one_before(estate, tmp_path):
    output = load(tmp_path, DENIES_COLLECT)

    assert (status_of("7.3"), status_of("7.4")) == ("retired", "active")
    assert f"contract {COLLECTIONS}@7.4: level reconstruct, active (replaces 7.3)" in output
    assert "gate policy_evaluates" in output and "passed" in output
    assert actions_on("7.4") == [
        "contract.load",
        "contract.activation_requested",
        "contract.activate",
    ]
    assert actions_on("7.3")[-1] == "contract.retire"
    retire = AuditEvent.objects.filter(action="contract.retire").latest("id")
    assert retire.after["replaced_by"] == "7.4" and retire.actor_name == "load_contracts"


def test_draft_loads_without_activating(estate, tmp_path):
    output = load(tmp_path, DENIES_COLLECT, "next.yaml", "--draft")

    assert "loaded as a draft" in output
    assert (status_of("7.3"), status_of("7.4")) == ("active", "draft")
    assert not ContractActivation.objects.filter(contract__version="7.4").exists()


def test_a_failing_gate_keeps_the_version_draft_and_exits_non_zero(estate, tmp_path):
    with pytest.raises(CommandError, match="release gates failed"):
        load(tmp_path, BREAKS_WITHOUT_COMPLAINT)

    assert (status_of("7.3"), status_of("7.6")) == ("active", "draft")
    refused = ContractActivation.objects.get(contract__version="7.6")
    assert refused.status == "refused"
    failed = [gate["name"] for gate in refused.gates if gate["status"] == "failed"]
    assert "policy_evaluates" in failed
    assert "release_gate_failed" in refused.detail
    assert actions_on("7.6")[-1] == "contract.activation_refused"


# --- Activation over HTTP -----------------------------------------------------------------------


def test_a_reviewer_activates_a_draft_in_a_worker(
    estate, reviewer, tmp_path, django_capture_on_commit_callbacks
):
    load(tmp_path, DENIES_COLLECT, "next.yaml", "--draft")

    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = activate(reviewer, "7.4", HTTP_X_REQUEST_ID="req-activate-1")

    assert response.status_code == 202, response.content
    body = response.json()
    assert (body["status"], body["contract_status"], body["code"]) == ("running", "draft", None)
    assert len(queued) == 1  # the gates run in the Celery task, not in the request
    contract_activation_run(activation_id=body["activation_id"])

    assert (status_of("7.3"), status_of("7.4")) == ("retired", "active")
    detail = reviewer.get(f"{CONTRACTS}/{COLLECTIONS}/7.4").json()
    assert detail["status"] == "active" and detail["activated_at"]
    assert [gate["name"] for gate in detail["gates"]] == [
        "replay",
        "fail_closed",
        "claims_cannot_authorise",
        "contradiction_handling",
        "policy_evaluates",
        "invariance",
        "correction_trace",
    ]
    assert detail["activations"][0]["status"] == "activated"
    assert detail["activations"][0]["replaced_version"] == "7.3"
    assert detail["adr"].startswith("# ADR")
    done = AuditEvent.objects.get(action="contract.activate", object_ref=f"{COLLECTIONS}@7.4")
    assert (done.actor, done.reason, done.request_id) == (
        reviewer.user,
        "reviewed the diff",
        "req-activate-1",
    )


@pytest.mark.django_db(transaction=True)
def test_an_eager_worker_answers_with_the_outcome(estate, reviewer, tmp_path, eager_tasks):
    """Committed for real, so the task runs on commit, before the answer is written."""
    load(tmp_path, DENIES_COLLECT, "next.yaml", "--draft")
    load(tmp_path, BREAKS_WITHOUT_COMPLAINT, "broken.yaml", "--draft")

    refused = activate(reviewer, "7.6")
    activated = activate(reviewer, "7.4")

    assert refused.status_code == 409
    assert refused["Content-Type"] == "application/problem+json"
    problem = refused.json()
    assert problem["code"] == "release_gate_failed"
    assert "policy_evaluates" in problem["failed_gates"] and problem["activation_id"]
    assert status_of("7.6") == "draft"
    assert (activated.status_code, activated.json()["status"]) == (200, "activated")


def test_rollback_restores_the_earlier_versions_decisions(
    collectible, agent, reviewer, tmp_path, django_capture_on_commit_callbacks
):
    before = reconcile(agent, "retain_manual_review")
    assert before["decision"]["result"] == "allow"
    load(tmp_path, DENIES_COLLECT)
    assert reconcile(agent, "retain_manual_review")["decision"]["result"] == "deny"

    with django_capture_on_commit_callbacks(execute=False):
        response = activate(reviewer, "7.3", "7.4 denied collectible accounts by mistake")
    contract_activation_run(activation_id=response.json()["activation_id"])

    assert ContractActivation.objects.latest("requested_at").replaced_version == "7.4"
    assert (status_of("7.3"), status_of("7.4")) == ("active", "retired")
    after = reconcile(agent, "retain_manual_review")
    assert (after["decision"]["result"], after["contract"]["version"]) == ("allow", "7.3")
    assert actions_on("7.3")[-1] == "contract.rollback"
    # What was decided under 7.3 before 7.4 went live does not authorise again.
    stale = commit(agent, before, "retain_manual_review", "manual_review", "k-before-rollback")
    assert (stale.status_code, stale.json()["code"]) == (409, "contract_superseded")
    fresh = commit(agent, after, "retain_manual_review", "manual_review", "k-after-rollback")
    assert fresh.status_code == 201, fresh.content


def test_a_late_activation_leaves_a_release_made_after_it_was_asked_for(
    estate, reviewer, tmp_path, django_capture_on_commit_callbacks
):
    """A reviewer's activation of 7.4 whose task ran late (a worker lost, the sweep's re-queue)
    after the deployer shipped 7.5: 7.5 stays live, and 7.4's activation says why not."""
    load(tmp_path, TIGHTENED, "v74.yaml", "--draft")
    with django_capture_on_commit_callbacks(execute=False):
        late = reviewer.post(f"{CONTRACTS}/{COLLECTIONS}/7.4/activate", {"rationale": "7.4 ok"})
    assert late.status_code == 202, late.content
    newer = TIGHTENED.replace('"7.4"', '"7.5"').replace("collections-2026-12", "collections-13")
    load(tmp_path, newer, "v75.yaml")
    assert status_of("7.5") == "active"

    finished = contract_activation_run(activation_id=late.json()["activation_id"])

    assert (finished.status, status_of("7.5"), status_of("7.4")) == ("failed", "active", "draft")
    assert "went live after this activation was requested" in finished.detail
    refused = AuditEvent.objects.filter(action="contract.activation_refused").last()
    assert refused is not None and refused.object_ref == f"{COLLECTIONS}@7.4"


@pytest.mark.parametrize("taken", ["role", "account"])
def test_an_activation_queued_by_a_reviewer_whose_access_was_taken_puts_nothing_live(
    estate, reviewer, tmp_path, django_capture_on_commit_callbacks, taken
):
    """The gates run in a worker, perhaps long after the request: a reviewer removed (or
    deactivated) meanwhile must not put a version live in their name when the task runs."""
    load(tmp_path, DENIES_COLLECT, "next.yaml", "--draft")
    with django_capture_on_commit_callbacks(execute=False):
        queued = activate(reviewer, "7.4")
    assert queued.status_code == 202, queued.content
    if taken == "role":
        reviewer.user.groups.clear()
    else:
        reviewer.user.is_active = False
        reviewer.user.save(update_fields=["is_active"])

    finished = contract_activation_run(activation_id=queued.json()["activation_id"])

    assert (finished.status, status_of("7.3"), status_of("7.4")) == ("failed", "active", "draft")
    assert "no longer" in finished.detail
    assert actions_on("7.4")[-1] == "contract.activation_refused"


@pytest.mark.parametrize(
    ("persona", "code"),
    [("operator", "forbidden"), ("auditor", "forbidden"), ("agent", "people_only")],
)
def test_only_reviewers_activate(request, estate, persona, code):
    response = activate(request.getfixturevalue(persona), "7.3")
    assert (response.status_code, response.json()["code"]) == (403, code)


def test_refusals_say_why(estate, reviewer, tmp_path, django_capture_on_commit_callbacks):
    load(tmp_path, DENIES_COLLECT, "next.yaml", "--draft")
    missing = activate(reviewer, "7.4", rationale="")
    assert missing.status_code == 400 and "rationale" in missing.json()["errors"]
    assert missing.json()["code"] == "rationale_required"
    already = activate(reviewer, "7.3")
    assert (already.status_code, already.json()["code"]) == (409, "already_active")
    unknown = activate(reviewer, "9.9")
    assert (unknown.status_code, unknown.json()["code"]) == (404, "contract_not_found")
    with django_capture_on_commit_callbacks(execute=False):
        assert activate(reviewer, "7.4").status_code == 202
        twice = activate(reviewer, "7.4")
    assert (twice.status_code, twice.json()["code"]) == (409, "activation_in_progress")
    assert not AuditEvent.objects.filter(action="contract.activate").exclude(
        actor_name="load_contracts"
    )


# --- Reading --------------------------------------------------------------------------------------


def test_versions_are_listed_for_people_with_status_and_level(estate, auditor, agent, tmp_path):
    load(tmp_path, DENIES_COLLECT, "next.yaml", "--draft")
    listed = auditor.get(f"{CONTRACTS}?decision_class={COLLECTIONS}").json()["results"]
    assert [(item["version"], item["status"]) for item in listed] == [
        ("7.4", "draft"),
        ("7.3", "active"),
    ]
    assert {item["level"] for item in listed} == {"reconstruct"}
    drafts = auditor.get(f"{CONTRACTS}?status=draft").json()["results"]
    assert [item["version"] for item in drafts] == ["7.4"]
    refused = agent.get(CONTRACTS)
    assert (refused.status_code, refused.json()["code"]) == (403, "people_only")


def test_obligation_selects_the_level(estate, auditor, tmp_path):
    comfortable = TIGHTENED.replace(
        "purpose: collections\n",
        "purpose: collections\nobligation: {mutability: low, authority: single, "
        "consequence: high, replay: none}\n",
    )
    load(tmp_path, comfortable)
    detail = auditor.get(f"{CONTRACTS}/{COLLECTIONS}/7.4").json()
    assert detail["obligation"] == {
        "mutability": "low",
        "authority": "single",
        "consequence": "high",
        "replay": "none",
    }
    assert detail["level"] == "narrative_ok"
    by_name = {gate["name"]: gate["status"] for gate in detail["gates"]}
    assert by_name["replay"] == by_name["correction_trace"] == "not_required"
    assert by_name["policy_evaluates"] == "passed"
    assert auditor.get(f"{CONTRACTS}/{COLLECTIONS}/7.3").json()["level"] == "reconstruct"


@pytest.mark.parametrize(
    ("obligation", "message"),
    [
        ("{mutability: high, authority: single, consequence: high}", "obligation.replay"),
        ("{mutability: medium, authority: single, consequence: high, replay: none}", "mutability"),
        ("{mutability: low, authority: single, consequence: low, replay: none, x: 1}", "`x`"),
    ],
)
def test_a_partial_or_unknown_assessment_is_refused(estate, tmp_path, obligation, message):
    text = TIGHTENED.replace(
        "purpose: collections\n", f"purpose: collections\nobligation: {obligation}\n"
    )
    with pytest.raises(CommandError, match=message):
        load(tmp_path, text)
    assert not Contract.objects.filter(version="7.4").exists()
