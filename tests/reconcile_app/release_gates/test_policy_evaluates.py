"""Gate `policy_evaluates`: a rule that errors when an optional field (or the proposed
value) is missing fails the gate, naming the rule and what was missing; rules over typed
fields do not fail for values of the gate's own making."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from reconcile_app.models import Contract, Principal, StateRead
from reconcile_app.selectors.contracts import contract_spec
from reconcile_app.services.contracts import contracts_load
from reconcile_app.services.reconcile import ReconcileRequest, snapshot_issue
from reconcile_app.services.release_gates import release_gates_run
from reconcile_app.services.release_gates.policy_evaluates import presence_combinations
from reconcile_app.services.release_gates.recorded import (
    CHOOSE_FROM,
    PER_FIELD,
    recorded_values,
)
from sandbox_app.choices import FaultKind
from sandbox_app.models import SandboxFault
from tests.conftest import make_agent
from tests.factories import SandboxRecordFactory, load_yaml, write_yaml
from tests.reconcile_app.release_gates.conftest import SOURCES, failed, gate

COLLECTIONS = "collections-contact-release"

ContractFrom = Callable[[str], Contract]

UNGUARDED = """
    decision_class: unguarded-complaint
    version: "1"
    purpose: collections
    required:
      - {field: collections_status, source: case-service, max_age_seconds: 300}
    optional:
      - {field: complaint_status, source: complaints-service, max_age_seconds: 600}
    actions:
      release_collections_hold: {field: collections_status}
    policy:
      version: "p1"
      deny: [{when: 'fields.collections_status == "hold"', code: hardship_hold}]
      escalate: [{when: 'fields.complaint_status == "open"', code: open_complaint}]
      allow: [{when: 'true', permits: [release_collections_hold]}]
    contradictions: escalate
"""


def test_a_rule_that_errors_when_an_optional_field_is_absent_fails(contract_from: ContractFrom):
    result = gate(contract_from(UNGUARDED), "policy_evaluates")

    failed(
        result,
        'escalate rule 1 (open_complaint) `fields.complaint_status == "open"`',
        "complaint_status absent",
        "KeyError: 'complaint_status'",
        "fails closed (matches)",
    )
    assert result.checks > 0


def test_a_rule_that_takes_long_to_evaluate_fails(estate: None, tmp_path: Path):
    # Three nested comprehensions over 100 numbers: a million steps, ~0.5 s a decision.
    # Every gate passed such a version and each reconcile of the class took 40 times longer.
    numbers = "[" + ", ".join(str(number) for number in range(100)) + "]"
    loop = f"{numbers}.exists(a, {numbers}.exists(b, {numbers}.exists(c, a + b + c > 500)))"
    slow = UNGUARDED.replace("'fields.complaint_status == \"open\"'", f"'{loop}'")
    paths = [str(write_yaml(tmp_path, name, text)) for name, text in SOURCES.items()]
    contracts_load(paths=[*paths, str(write_yaml(tmp_path, "slow.yaml", slow))], activate=False)
    contract = Contract.objects.get(decision_class="unguarded-complaint")

    results = {result.name: result for result in release_gates_run(contract, level="reconstruct")}

    result = failed(
        results["policy_evaluates"],
        "escalate rule 1 (open_complaint)",
        "every decision of the class waits on it",
        "at most 50 ms",
    )
    assert result.checks == 2  # the deny rule, then the escalate rule: stopped at once
    # Run first, it spares the others minutes of evaluating the rule (past a worker's limit).
    for name in ("replay", "fail_closed", "claims_cannot_authorise", "contradiction_handling"):
        failed(results[name], "Not run: policy_evaluates found a rule too slow to evaluate")
        assert results[name].duration_ms == 0


def test_the_same_rule_guarded_by_has_passes(contract_from: ContractFrom):
    guarded = UNGUARDED.replace(
        "'fields.complaint_status == \"open\"'",
        "'has(fields.complaint_status) && fields.complaint_status == \"open\"'",
    )

    result = gate(contract_from(guarded), "policy_evaluates")

    assert result.status == "passed", result.detail
    assert "2 combinations of 1 optional fields" in result.detail


def test_the_report_counts_cases_and_evaluations_apart(contract_from: ContractFrom):
    # It said "3 rules evaluated to a boolean in 861 cases" of 287 cases (41 states by 7
    # proposals), each of which evaluated the 3 rules: 861 was the evaluations.
    guarded = UNGUARDED.replace(
        "'fields.complaint_status == \"open\"'",
        "'has(fields.complaint_status) && fields.complaint_status == \"open\"'",
    )

    result = gate(contract_from(guarded), "policy_evaluates")

    found = re.match(
        r"(\d+) rules evaluated to a boolean in each of (\d+) cases \((\d+) evaluations\): "
        r"(\d+) states by (\d+) proposals",
        result.detail,
    )
    assert found, result.detail
    rules, cases, evaluations, states, proposals = map(int, found.groups())
    assert (rules, cases) == (3, states * proposals)
    assert evaluations == cases * rules == result.checks


def test_a_rule_that_needs_a_proposed_value_it_does_not_test_for_fails(
    contract_from: ContractFrom,
):
    contract = contract_from(
        """
        decision_class: unguarded-value
        version: "1"
        purpose: card-dispatch
        required:
          - {field: delivery_address, source: customer-master, max_age_seconds: 900}
        actions:
          dispatch_card: {field: delivery_address}
        policy:
          version: "p1"
          deny: [{when: 'effect.value != fields.delivery_address', code: address_not_read}]
          allow: [{when: 'true', permits: [dispatch_card]}]
        """
    )

    failed(
        gate(contract, "policy_evaluates"),
        "deny rule 1 (address_not_read)",
        "no action proposed",
        "KeyError: 'value'",
    )


def test_rules_over_numbers_and_booleans_are_tried_with_numbers_and_booleans(
    contract_from: ContractFrom,
):
    contract = contract_from(
        """
        decision_class: typed-fields
        version: "1"
        purpose: collections
        required:
          - {field: balance, source: ledger-service, max_age_seconds: 300}
          - {field: vulnerable, source: ledger-service, max_age_seconds: 300}
        optional:
          - {field: account_status, source: ledger-service, max_age_seconds: 300}
        actions:
          collect: {field: balance}
        policy:
          version: "p1"
          deny:
            - {when: 'fields.vulnerable', code: vulnerable}
            - {when: 'fields.balance <= 0', code: nothing_owed}
            - {when: 'has(fields.account_status) && fields.account_status in ["closed", "sold"]', code: closed}
          allow: [{when: '!fields.vulnerable && fields.balance > 100', permits: [collect]}]
        """
    )

    results = {result.name: result for result in release_gates_run(contract, level="reconstruct")}

    assert results["policy_evaluates"].status == "passed", results["policy_evaluates"].detail
    # The states the other gates start from were found: the policy allows one and denies one.
    assert "allow, deny" in results["fail_closed"].detail


def test_an_optional_boolean_used_without_has_fails(contract_from: ContractFrom):
    contract = contract_from(
        """
        decision_class: unguarded-boolean
        version: "1"
        purpose: collections
        required:
          - {field: balance, source: ledger-service, max_age_seconds: 300}
        optional:
          - {field: vulnerable, source: ledger-service, max_age_seconds: 300}
        actions:
          collect: {field: balance}
        policy:
          version: "p1"
          allow: [{when: '!fields.vulnerable', permits: [collect]}]
        """
    )

    failed(
        gate(contract, "policy_evaluates"),
        "allow rule 1 `!fields.vulnerable`",
        "vulnerable absent",
        "fails closed (never matches)",
    )


def test_every_combination_up_to_six_optional_fields_then_each_alone():
    assert len(presence_combinations(["a", "b", "c"])) == 8
    assert len(presence_combinations([f"f{n}" for n in range(6)])) == 64
    seven = [f"f{n}" for n in range(7)]
    combinations = presence_combinations(seven)
    assert len(combinations) == 9
    assert frozenset() in combinations and frozenset(seven) in combinations
    assert all(frozenset({name}) in combinations for name in seven)


# --- values the owners really return ---------------------------------------------------

MISTYPED = """
    decision_class: mistyped-status
    version: "1"
    purpose: collections
    required:
      - {field: collections_status, source: case-service, max_age_seconds: 300}
    actions:
      release_collections_hold: {field: collections_status}
    policy:
      version: "p1"
      deny: [{when: 'fields.collections_status > 5', code: over_five}]
      allow: [{when: 'true', permits: [release_collections_hold]}]
"""


def _decided_on(subject: str, value: Any) -> None:
    """One live decision of the demo class, whose case-service read returned `value`."""
    principal = Principal.objects.filter(name="recorded-agent").first() or (
        make_agent("recorded-agent", [f"{COLLECTIONS}:release_collections_hold"]).principal
    )
    SandboxRecordFactory(subject=subject, value=value, version=3, valid_from=timezone.now())
    snapshot_issue(
        principal=principal,
        request=ReconcileRequest(
            subject=subject, purpose="collections", decision_class=COLLECTIONS
        ),
    )


def test_a_rule_of_the_wrong_type_for_what_owners_return_fails(contract_from: ContractFrom):
    contract = contract_from(MISTYPED)
    # Tried only with the rule's own literal (5, 6, 4), the mistyped rule looks sound.
    assert gate(contract, "policy_evaluates").status == "passed"

    _decided_on("acct-recorded", "collect")

    failed(
        gate(contract, "policy_evaluates"),
        "deny rule 1 (over_five) `fields.collections_status > 5`",
        "'collections_status': 'collect'",
        "read from its owner in a recent decision: collections_status='collect'",
        "fails closed (matches)",
    )


def test_the_same_field_from_another_owner_is_not_what_this_contract_reads(
    estate: None, tmp_path: Path
):
    # archive-service's `collections_status` is another owner's field, whatever its name.
    load_yaml(
        tmp_path,
        {
            "archive-service.yaml": """
                source: archive-service
                owner: archive-team
                adapter: sandbox
                consistency: linearizable
                fact_classes: [collections_status]
            """,
            "contract.yaml": MISTYPED.replace("case-service", "archive-service"),
        },
    )
    contract = Contract.objects.get(decision_class="mistyped-status")
    _decided_on("acct-other-owner", "collect")

    result = gate(contract, "policy_evaluates")

    assert result.status == "passed", result.detail
    assert "recent reads" not in result.detail


def test_recorded_values_keep_one_of_each_type_first_and_a_bounded_number(estate: None):
    spec = contract_spec(Contract.objects.get(decision_class=COLLECTIONS))
    for index, value in enumerate(["collect", "hold", *(f"s{n}" for n in range(12)), 7, True]):
        _decided_on(f"acct-{index}", value)

    values = recorded_values(spec).values["collections_status"]

    assert len(values) == PER_FIELD
    # Newest first; the number and the boolean are kept although twelve strings came after.
    assert values[:3] == [True, 7, "s11"]
    assert set(values) <= {"collect", "hold", 7, True, *(f"s{n}" for n in range(12))}


def test_a_rare_type_is_kept_however_many_values_came_after_it(estate: None):
    spec = contract_spec(Contract.objects.get(decision_class=COLLECTIONS))
    _decided_on("acct-number", 7)
    for index in range(CHOOSE_FROM + 1):
        _decided_on(f"acct-s{index}", f"s{index}")

    values = recorded_values(spec).values["collections_status"]

    assert 7 in values and len(values) == PER_FIELD


def test_a_mistyped_value_behind_another_fields_guard_fails(contract_from: ContractFrom):
    # `false && error` is false: beside "open" the mistyped comparison is never reached, and
    # only a state with another complaint status shows it.
    contract = contract_from(
        MISTYPED.replace(
            "'fields.collections_status > 5'",
            '\'has(fields.complaint_status) && fields.complaint_status != "open" '
            "&& fields.collections_status > 5'",
        ).replace(
            "    actions:",
            "    optional:\n"
            "      - {field: complaint_status, source: complaints-service, "
            "max_age_seconds: 600}\n"
            "    actions:",
        )
    )
    assert gate(contract, "policy_evaluates").status == "passed"

    _decided_on("acct-guarded", "collect")

    failed(
        gate(contract, "policy_evaluates"),
        "fields.collections_status > 5",
        "read from its owner in a recent decision: collections_status='collect'",
    )


def test_reads_that_were_not_ok_are_not_values(estate: None):
    spec = contract_spec(Contract.objects.get(decision_class=COLLECTIONS))
    SandboxFault.objects.create(source="case-service", kind=FaultKind.UNAVAILABLE)
    _decided_on("acct-down", "collect")  # read `unavailable`: the record is not a value
    assert StateRead.objects.get(field="collections_status").status == "unavailable"

    assert "collections_status" not in recorded_values(spec).values


@pytest.mark.parametrize(
    "condition",
    [
        "double(fields.balance) > 500.0",
        # docs/api.md's own examples: converted, then computed with, then compared. The
        # field was tried as a neutral text, which no conversion takes, and the gate failed.
        "double(fields.balance) * 1.5 > 500.0",
        "int(fields.balance) + 1 > 500",
    ],
)
def test_a_rule_over_a_converted_number_passes(contract_from: ContractFrom, condition: str):
    # The conversion docs/api.md recommends for numbers an owner may send as text or as a
    # whole number: the gate tried the field as true and false and failed the version.
    contract = contract_from(
        """
        decision_class: converted-number
        version: "1"
        purpose: collections
        required:
          - {field: balance, source: ledger-service, max_age_seconds: 300}
        actions:
          collect: {field: balance}
        policy:
          version: "p1"
          escalate: [{when: 'CONDITION', code: large}]
          allow: [{when: 'true', permits: [collect]}]
        """.replace("CONDITION", condition)
    )

    result = gate(contract, "policy_evaluates")

    assert result.status == "passed", result.detail
