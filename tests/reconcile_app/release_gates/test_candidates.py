"""The values the gates try for each field, read off the contract's rules and actions."""

from __future__ import annotations

from reconcile_app.reconciliation.types import ContractSpec, FieldSpec, RuleSpec
from reconcile_app.services.release_gates.candidates import (
    NEUTRAL,
    OTHER,
    field_candidates,
    other_values,
    rule_labels,
)


def spec(rules: list[tuple[str, str, str]], **extra: object) -> ContractSpec:
    names = ("status", "complaint", "balance", "vulnerable", "region")
    return ContractSpec(
        pk=1,
        decision_class="c",
        version="1",
        purpose="p",
        policy_version="p1",
        contradictions="escalate",
        commit_window_seconds=60,
        reducer="",
        content_hash="h",
        fields=tuple(FieldSpec(name, "s", name == "status", 60, False) for name in names),
        actions={"close": "status"},
        rules=tuple(RuleSpec(kind, expression, code, ()) for kind, expression, code in rules),
        **extra,  # type: ignore[arg-type]
    )


def test_literals_compared_with_a_field_and_written_by_an_action_are_its_values():
    candidates = field_candidates(
        spec(
            [
                ("deny", 'fields.status == "hold" || "frozen" == fields.status', "held"),
                ("escalate", "has(fields.complaint) && fields.complaint in ['open', 'new']", "c"),
                ("allow", "true", ""),
            ],
            action_values={"close": ("closed",)},
        )
    )

    assert candidates["status"] == ["hold", "frozen", "closed", NEUTRAL]
    assert candidates["complaint"] == ["open", "new", NEUTRAL]
    assert candidates["region"] == [NEUTRAL]


def test_a_field_compared_by_order_is_tried_either_side_of_the_threshold_and_never_as_text():
    candidates = field_candidates(
        spec([("deny", "fields.balance > 100 && 2.5 >= fields.balance", "b")])
    )

    assert candidates["balance"] == [100, 101, 99, 2.5, 3.5, 1.5]


def test_a_field_used_as_a_condition_is_a_boolean():
    candidates = field_candidates(
        spec(
            [
                ("deny", "fields.vulnerable", "v"),
                ("allow", "!fields.status && has(fields.complaint)", ""),
            ]
        )
    )

    assert candidates["vulnerable"] == [True, False]
    assert candidates["status"] == [True, False]
    # `has(fields.x)` tests presence, not truth.
    assert candidates["complaint"] == [NEUTRAL]


def test_other_values_are_the_fields_other_candidates_or_one_no_rule_names():
    assert other_values(["hold", NEUTRAL], "hold") == [NEUTRAL]
    assert other_values([True, False], True) == [False]
    assert other_values([1, True], 1) == [True]
    assert other_values([NEUTRAL], NEUTRAL) == [OTHER]


def test_rules_are_labelled_by_kind_number_and_code():
    labels = rule_labels(
        spec([("deny", "a", "first"), ("deny", "b", "second"), ("allow", "true", "")])
    )

    assert labels == ["deny rule 1 (first) `a`", "deny rule 2 (second) `b`", "allow rule 1 `true`"]


def test_a_long_rule_is_quoted_by_its_start_and_its_length():
    long_rule = " || ".join(f'fields.status == "value-{n}"' for n in range(400))
    (label,) = rule_labels(spec([("deny", long_rule, "many")]))

    assert label.startswith(
        f"deny rule 1 (many) `{long_rule[:200]}… ({len(long_rule):,} characters)`"
    )
    assert len(label) < 300


def test_a_field_converted_before_a_comparison_is_tried_as_the_number_it_is_compared_with():
    # docs/api.md tells authors to convert explicitly (`double(fields.level) * 1.5`): the
    # call's argument was taken for a condition on its own and tried as true and false, and
    # the threshold went unseen, so `double(fields.balance) > 500.0` failed policy_evaluates
    # ("Undefined variable or function: 'double'") on a value no owner returned.
    candidates = field_candidates(
        spec(
            [
                ("escalate", "double(fields.balance) > 500.0", "large"),
                ("deny", "int(fields.region) == 3 || size(fields.complaint) > 0", "r"),
            ]
        )
    )

    assert candidates["balance"] == [500.0, 501.0, 499.0]
    assert candidates["region"] == [3]
    assert candidates["complaint"] == [NEUTRAL]


def test_a_field_converted_then_computed_with_is_tried_as_a_number():
    # docs/api.md: `double(fields.level) * 1.5`, `int(fields.count) + 1`. No literal is the
    # field's own, and a neutral text would not convert: a number, and no text.
    candidates = field_candidates(
        spec(
            [
                ("escalate", "double(fields.balance) * 1.5 > 500.0", "large"),
                ("deny", "int(fields.region) + 1 > 3 || int(fields.complaint) == 2", "r"),
            ]
        )
    )

    assert candidates["balance"] == [0]
    assert candidates["region"] == [0]
    assert candidates["complaint"] == [2]
