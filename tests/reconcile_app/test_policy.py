"""Policy conditions: evaluated over state fields, and why one could not be."""

from __future__ import annotations

from reconcile_app import policy


def test_a_condition_on_an_absent_field_cannot_be_evaluated_and_says_which():
    assert policy.evaluate_explained('fields.complaint_status == "open"', {}) == (
        None,
        "KeyError: 'complaint_status'",
    )
    assert policy.evaluate('fields.complaint_status == "open"', {}) is None


def test_a_condition_that_is_not_a_boolean_cannot_be_evaluated():
    result, why = policy.evaluate_explained("fields.balance", {"balance": 3})
    assert result is None
    assert why == "evaluated to 3, not a boolean"


def test_a_condition_that_evaluates_has_no_explanation():
    assert policy.evaluate_explained(
        'has(fields.complaint_status) && fields.complaint_status == "open"', {}
    ) == (False, "")
    assert policy.evaluate_explained("effect.action == 'x'", {}, {"action": "x"}) == (True, "")


def test_a_condition_over_the_length_cap_is_never_evaluated():
    # 15,000 terms compiled and then crashed the evaluating process (SIGSEGV); a stored one
    # fails closed with the reason instead. 2,000 terms are over the cap and safe to try.
    chain = " + ".join(["1"] * 2_000) + " > 0"

    result, why = policy.evaluate_explained(chain, {})

    assert result is None
    assert why == "PolicyCompileError: a condition is at most 4,096 characters, not 8,001"
    assert policy.evaluate_explained(" + ".join(["1"] * 1000) + " > 0", {}) == (True, "")


RULES = [
    'fields.collections_status == "collect"',
    'has(fields.complaint_status) && fields.complaint_status == "open"',
    "fields.balance > 100",
    "fields.balance",
    'effect.action == "release_collections_hold" && !has(effect.value)',
    "has(effect.value) && effect.value == 3",
    'fields.tags.exists(t, t == "vip")',
    "fields.missing == 1",
]


def test_rules_over_one_decisions_variables_evaluate_as_each_alone():
    # A decision converts its fields and effect for CEL once and evaluates every rule over
    # them: each must come out as it does evaluated on its own, in any order, repeatedly.
    cases = [
        ({"collections_status": "collect", "balance": 150, "tags": ["vip"]}, {"action": "x"}),
        ({"collections_status": "hold", "balance": 1.5, "tags": []}, None),
        ({"complaint_status": "open", "balance": None, "tags": [None, {"a": 1}]}, {"value": 3}),
        ({"balance": 10**30, "tags": "vip"}, {"action": "release_collections_hold"}),
    ]
    for fields, effect in cases:
        over = policy.variables(fields, effect)
        for rule in RULES + RULES[::-1]:
            assert policy.evaluate_over(rule, over) == policy.evaluate(rule, fields, effect)


def test_variables_cel_cannot_hold_fail_every_rule_closed():
    over = policy.variables({"collections_status": object()})

    assert policy.evaluate_over('fields.collections_status == "collect"', over) is None
    assert policy.evaluate_over("true", over) is None
