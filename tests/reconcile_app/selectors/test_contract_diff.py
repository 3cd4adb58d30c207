"""What changed between two versions of a class: fields and actions by name, rules by
condition then by place, settings one by one."""

from __future__ import annotations

import pytest

from reconcile_app.errors import NotFound
from reconcile_app.selectors.contract_diff import contract_versions_diff
from tests.conftest import COLLECTIONS
from tests.reconcile_app.console.contract_world import (  # noqa: F401 (fixtures)
    ACTIVE,
    DRAFT,
    DRAFT_FILE,
    contract_world,
    gates,
    load_draft,
)

BASE = """\
decision_class: diffed
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
  deny:
    - {when: 'fields.collections_status == "hold"', code: hardship_hold}
    - {when: 'fields.collections_status == "closed"', code: closed}
  allow: [{when: 'true', permits: [release_collections_hold]}]
"""


def changes(rows):  # type: ignore[no-untyped-def]
    return {row.key: (row.status, row.changed) for row in rows}


def test_parts_are_matched_by_name_and_rules_by_condition_then_place(contract_world, tmp_path):
    load_draft(tmp_path, BASE, "one.yaml")
    load_draft(
        tmp_path,
        BASE.replace('version: "1"', 'version: "2"')
        # The two deny rules swap places; the allow rule's condition is rewritten in place.
        .replace(
            "    - {when: 'fields.collections_status == \"hold\"', code: hardship_hold}\n"
            "    - {when: 'fields.collections_status == \"closed\"', code: closed}\n",
            "    - {when: 'fields.collections_status == \"closed\"', code: closed}\n"
            "    - {when: 'fields.collections_status == \"hold\"', code: hardship_hold}\n",
        )
        .replace("allow: [{when: 'true',", "allow: [{when: 'has(effect.value)',")
        .replace(
            "optional:\n  - {field: complaint_status, source: complaints-service, "
            "max_age_seconds: 600}\n",
            "",
        )
        .replace(
            "  release_collections_hold: {field: collections_status}\n",
            "  release_collections_hold: {field: collections_status}\n"
            "  retain_manual_review: {field: collections_status, values: [manual_review]}\n",
        ),
        "two.yaml",
    )
    diff = contract_versions_diff(decision_class="diffed", from_version="1", to_version="2").diff

    assert changes(diff.fields) == {
        "collections_status": ("same", []),
        "complaint_status": ("removed", []),
    }
    assert changes(diff.actions) == {
        "release_collections_hold": ("same", []),
        "retain_manual_review": ("added", []),
    }
    rules = changes(diff.rules)
    # Moving a rule keeps it the same rule, at another place.
    assert rules["deny 1"] == ("changed", ["position"])
    assert rules["deny 2"] == ("changed", ["position"])
    assert rules["allow 1"] == ("changed", ["expression"])
    assert [row.key for row in diff.rules] == ["deny 1", "deny 2", "allow 1"]
    assert diff.differences == 5 and not diff.identical


def test_an_added_rule_and_a_removed_rule_stand_alone(contract_world, tmp_path):
    load_draft(tmp_path, BASE, "one.yaml")
    load_draft(
        tmp_path,
        BASE.replace('version: "1"', 'version: "2"').replace(
            "    - {when: 'fields.collections_status == \"closed\"', code: closed}\n", ""
        )
        + "  escalate: [{when: 'fields.collections_status == \"review\"', code: review}]\n",
        "two.yaml",
    )
    diff = contract_versions_diff(decision_class="diffed", from_version="1", to_version="2").diff
    statuses = {row.key: row.status for row in diff.rules}
    assert statuses == {
        "deny 1": "same",
        "deny 2": "removed",
        "escalate 1": "added",
        "allow 1": "same",
    }
    removed = next(row for row in diff.rules if row.status == "removed")
    assert removed.after is None and removed.before["code"] == "closed"


def test_settings_compare_one_by_one(contract_world):
    diff = contract_versions_diff(
        decision_class=COLLECTIONS, from_version=ACTIVE, to_version=DRAFT
    ).diff
    settings = {
        item.name: (item.before, item.after) for item in diff.settings if item.status != "same"
    }
    # Whatever 7.3 answered (or if it was not assessed), 7.4 finds the authority contested.
    assessed = contract_world.active.obligation or {}
    answers = {"mutability": "high", "authority": "contested", "consequence": "high"}
    answers["replay"] = "required"
    assert settings == {
        "policy_version": ("collections-2026-08", "collections-2026-12"),
        "contradictions": ("escalate", "refuse"),
        "commit_window_seconds": (120, 60),
        **{
            f"obligation.{question}": (assessed.get(question), answer)
            for question, answer in answers.items()
            if assessed.get(question) != answer
        },
    }
    assert settings["obligation.authority"] == (assessed.get("authority"), "contested")


def test_a_version_against_itself_is_identical_and_unknown_versions_are_not_found(
    contract_world,
):
    same = contract_versions_diff(
        decision_class=COLLECTIONS, from_version=ACTIVE, to_version=ACTIVE
    )
    assert same.diff.identical
    with pytest.raises(NotFound):
        contract_versions_diff(decision_class=COLLECTIONS, from_version="0.1", to_version=None)
    with pytest.raises(NotFound):
        contract_versions_diff(decision_class="nothing-here", from_version=None, to_version=None)
