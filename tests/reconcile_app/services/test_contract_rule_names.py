"""A policy condition may name only the fields its contract reads and what `effect` holds.

`has(fields.typo)` compiles and evaluates (false for every decision), so no release gate can
tell it from a field that is merely absent: an escalate rule guarded so never escalates, and
an allow rule so never allows. Without `has`, the name fails closed on every decision. Both
are refused at load, at the rule's line, naming the field and the contract's fields.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reconcile_app import policy
from reconcile_app.errors import ContractFileError
from reconcile_app.models import Contract
from tests.factories import load_yaml

CONTRACT = """\
decision_class: named-fields
version: "1"
purpose: collections
required:
  - {{field: collections_status, source: case-service, max_age_seconds: 300}}
optional:
  - {{field: complaint_status, source: complaints-service, max_age_seconds: 600}}
actions:
  release_collections_hold: {{field: collections_status}}
policy:
  version: "p1"
  escalate:
    - {{when: '{condition}', code: review}}
  allow: [{{when: 'true', permits: [release_collections_hold]}}]
"""
CONDITION_LINE = 13


@pytest.mark.parametrize(
    ("condition", "named"),
    [
        ('has(fields.complaint_state) && fields.complaint_state == "open"', "complaint_state"),
        ('fields.collection_status == "hold"', "collection_status"),
        ('fields["complaint_stat"] == "open"', "complaint_stat"),
        # CEL's other test of presence: as false for every decision as has(fields.typo).
        ('"complaint_stats" in fields && fields.complaint_status == "open"', "complaint_stats"),
    ],
)
def test_a_condition_naming_a_field_the_contract_does_not_read_is_refused_at_its_line(
    estate: None, tmp_path: Path, condition: str, named: str
):
    with pytest.raises(ContractFileError) as refused:
        load_yaml(tmp_path, {"contract.yaml": CONTRACT.format(condition=condition)})

    assert refused.value.line == CONDITION_LINE
    assert f"fields.{named}" in refused.value.reason
    assert "collections_status, complaint_status" in refused.value.reason
    assert not Contract.objects.filter(decision_class="named-fields").exists()


def test_a_condition_naming_what_effect_does_not_hold_is_refused(estate: None, tmp_path: Path):
    with pytest.raises(ContractFileError) as refused:
        load_yaml(tmp_path, {"contract.yaml": CONTRACT.format(condition="has(effect.valeu)")})

    assert refused.value.line == CONDITION_LINE
    assert "effect.valeu" in refused.value.reason


@pytest.mark.parametrize(
    "condition",
    [
        'has(fields.complaint_status) && fields.complaint_status == "open"',
        # A string that merely spells a member is no reference to it.
        'fields.collections_status == "fields.nothing" && has(effect.value)',
        '[1, 2].exists(x, x == 3) || fields["collections_status"] == "review"',
        # A macro over the map is no member of it.
        'fields.exists(k, k == "complaint_status") && fields.collections_status == "hold"',
        '"complaint_status" in fields && "value" in effect',
        # CEL's comments are no reference either, whatever they name.
        'fields.collections_status == "hold" // was fields.collection_state in 0.9',
        'fields.collections_status == "hold" // an unclosed " then fields.gone',
    ],
)
def test_conditions_over_the_contracts_own_fields_load(
    estate: None, tmp_path: Path, condition: str
):
    load_yaml(tmp_path, {"contract.yaml": CONTRACT.format(condition=condition)})

    assert Contract.objects.filter(decision_class="named-fields").exists()


def test_members_read_sets_string_literals_aside():
    assert policy.members_read("fields.a == 'fields.b' && fields[\"c\"] != effect.value") == {
        "fields": {"a", "c"},
        "effect": {"value"},
    }


@pytest.mark.parametrize("code", ["stale_state", "state_unavailable", "no_rule_matched"])
def test_a_rule_may_not_take_a_reason_code_the_engine_gives(
    estate: None, tmp_path: Path, code: str
):
    """Under a rule's escalate or deny, `stale_state` told an agent its read was stale: it
    would reconcile again for a fresher one that cannot change the answer."""
    contract = CONTRACT.format(condition="true").replace("code: review", f"code: {code}")
    with pytest.raises(ContractFileError) as refused:
        load_yaml(tmp_path, {"contract.yaml": contract})

    assert refused.value.line == CONDITION_LINE
    assert f"`code` {code} is one the engine gives" in refused.value.reason
    assert not Contract.objects.filter(decision_class="named-fields").exists()


def test_members_read_sets_comments_aside_but_not_the_next_line():
    """CEL's `//` comment runs to the end of its line; a `//` inside a string is text."""
    assert policy.members_read('fields.a // fields.b, "x\n&& fields.c == "//" && fields.d') == {
        "fields": {"a", "c", "d"},
        "effect": set(),
    }


def test_members_read_takes_a_key_tested_with_in_for_a_member():
    assert policy.members_read('"a" in fields && "b" in fields.c && "value" in effect') == {
        "fields": {"a", "c"},
        "effect": {"value"},
    }
