"""A contract version's decision record (seed 002's ADR): every section, with the version's
real values, deterministic, and Markdown that people's text cannot break."""

from __future__ import annotations

import re

import pytest

from reconcile_app.models import Contract
from reconcile_app.obligation import OBLIGATION_VALUES, obligation_triggers
from reconcile_app.services.decision_record import code, decision_record, quoted
from tests.conftest import COLLECTIONS
from tests.reconcile_app.console.contract_world import (  # noqa: F401 (fixtures)
    ACTIVE,
    DRAFT,
    activate,
    contract_world,
    gates,
)

SECTIONS = (
    "## Context",
    "## Obligation assessment",
    "## Decision",
    "### Required fields (fail closed)",
    "### Optional fields (degrade)",
    "### Refusal path",
    "### Uncertainty representation",
    "### Policy ",
    "### Actions",
    "### Commit window",
    "### Reducer",
    "### Snapshot retention",
    "### Effect readback",
    "## Release gates",
    "## Activation",
)
TIME = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC"


def fresh(contract: Contract) -> Contract:
    """The version read again, so nothing fetched before is reused."""
    return Contract.objects.get(pk=contract.pk)


def test_the_demo_contract_record_has_every_section_with_its_values(contract_world):
    record = decision_record(fresh(contract_world.active))

    assert record.startswith(f"# ADR: {COLLECTIONS} {ACTIVE}\n")
    positions = [record.index(heading) for heading in SECTIONS]
    assert positions == sorted(positions), "sections out of order"
    assert "- Status: **active**" in record
    assert re.search(rf"- Loaded: {TIME} from `.*collections-contact-release.yaml`", record)
    assert re.search(rf"- Went live: {TIME}", record)
    assert "purpose `collections`" in record
    # The assessment as the file gives it (or the strict default), and what it selected.
    contract = contract_world.active
    if contract.obligation:
        for question in OBLIGATION_VALUES:
            assert f"| {question} | {contract.obligation[question]} |" in record
    else:
        assert "Not assessed" in record
    assert f"Level: **{contract.level}**" in record
    for trigger in obligation_triggers(contract.obligation):
        assert f"- {trigger}\n" in record
    # Source owners, freshness budget, evidence rule.
    assert (
        "| collections_status | case-service | servicing-team | linearizable | 0 s | 300 s "
        "| required |" in record
    )
    assert (
        "| complaint_status | complaints-service | complaints-team | read_your_writes | 5 s "
        "| 600 s | optional |" in record
    )
    assert "Fails closed on: `collections_status`." in record
    assert "Degrades on: `complaint_status`." in record
    assert "Contradictions: **escalate**" in record
    assert "### Policy `collections-2026-08`" in record
    assert '1. deny `hardship_hold` when `fields.collections_status == "hold"`' in record
    assert "2. escalate `open_complaint` when `has(fields.complaint_status)" in record
    assert "3. allow when `true`: permits `release_collections_hold`, `retain_manual_review`" in (
        record
    )
    assert "4. otherwise: deny `no_rule_matched`" in record
    assert (
        "| release_collections_hold | collections_status (at case-service) "
        "| any value the policy allows |" in record
    )
    assert "120 s: a snapshot older than this cannot authorise a commit" in record
    assert "None: every field is read live from its owner." in record
    assert "append-only" in record and "`contract_superseded`" in record
    assert "`verified`" in record and "`postcondition_failed`" in record
    # Release gates of its activation, and who activated it and why.
    assert re.search(
        rf"Activation `act_\w+` \(activated, level reconstruct\), finished {TIME}", record
    )
    assert "| replay | passed | replay: 2 checks passed |" in record
    assert "| invariance | not_required | the contract has no reducer |" in record
    assert re.search(rf"Activated by load_contracts at {TIME} \(activation `act_\w+`\)", record)
    assert "the class's first active version" in record
    assert "> loaded by load_contracts from" in record


def test_an_assessed_version_names_its_answers_triggers_and_what_it_replaced(
    contract_world, reviewer
):
    activate(contract_world.draft, reviewer, rationale="Complaints must be read first.")
    record = decision_record(fresh(contract_world.draft))

    assert "> A complaint must have been read before a hold is released." in record
    for question, answer in (
        ("mutability", "high"),
        ("authority", "contested"),
        ("consequence", "high"),
        ("replay", "required"),
    ):
        assert f"| {question} | {answer} |" in record
    assert (
        "- consequence and mutability are both high\n- authority is contested\n- replay is required"
    ) in record
    assert "| complaint_status | complaints-service | complaints-team" in record
    assert "### Optional fields (degrade)\n\nNone." in record
    assert '| "released" |' in record
    assert "Contradictions: **refuse**" in record and "60 s:" in record
    # A CEL `||` is in a code span, not a table: it cannot split anything.
    assert '`fields.complaint_status == "open" || fields.complaint_status == "new"`' in record
    assert "Activated by rhys-reviewer at" in record
    assert f", replacing `{ACTIVE}`. Why:\n\n> Complaints must be read first." in record


def test_a_retired_version_says_when_and_by_whom_and_a_draft_that_it_never_ran(
    contract_world, reviewer
):
    fresh_draft = decision_record(fresh(contract_world.draft))
    assert "- Status: **draft**" in fresh_draft and "- Went live: never" in fresh_draft
    assert "## Release gates\n\nNot run yet." in fresh_draft
    assert "## Activation\n\nNever activated." in fresh_draft

    activate(contract_world.draft, reviewer, rationale="Complaints must be read first.")
    retired = decision_record(fresh(contract_world.active))
    assert "- Status: **retired**" in retired
    assert re.search(rf"- Retired: {TIME}", retired)
    assert re.search(
        rf"Retired at {TIME}, when rhys-reviewer activated `{DRAFT}` \(activation `act_\w+`\)",
        retired,
    )
    assert retired.endswith("> Complaints must be read first.\n")


def test_the_record_is_deterministic_and_cheap(contract_world, django_assert_num_queries):
    first = decision_record(fresh(contract_world.active))
    contract = fresh(contract_world.active)
    # Its parts in three queries, its activations (and what retired it) in one, the class's
    # versions in one.
    with django_assert_num_queries(5):
        second = decision_record(contract)
    assert first == second


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain", "`plain`"),
        ("a`b", "``a`b``"),
        ("``x", "``` ``x ```"),
        ("two\nlines", "`two lines`"),
    ],
)
def test_code_spans_hold_any_text(text, expected):
    assert code(text) == expected


def test_quoted_text_never_becomes_structure():
    assert quoted("# not a heading\n- not a list\n\nlast") == (
        "> # not a heading\n> - not a list\n>\n> last"
    )
