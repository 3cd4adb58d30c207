"""load_contracts: sources and contracts from YAML, all or nothing, immutable once loaded."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from reconcile_app.models import (
    Contract,
    ContractField,
    PolicyRule,
    Source,
)
from tests.conftest import ESTATE
from tests.factories import write_yaml

LAB_SOURCE = """\
source: lab-service
owner: lab-team
adapter: sandbox
consistency: linearizable
expected_lag_seconds: 0
fact_classes: [level, flag]
"""

# Line numbers matter: the loader reports `path:line: reason`.
LAB_CONTRACT = """\
decision_class: lab-check
version: "1"
purpose: testing
required:
  - {field: level, source: lab-service, max_age_seconds: 300}
optional:
  - {field: flag, source: lab-service, max_age_seconds: 300}
actions:
  adjust: {field: level}
policy:
  version: "lab-1"
  deny:
    - when: 'fields.level > 3'
      code: too_high
  allow:
    - when: 'true'
      permits: [adjust]
contradictions: escalate
"""


def load(*paths: Path | str) -> str:
    out = StringIO()
    call_command("load_contracts", *[str(p) for p in paths], stdout=out)
    return out.getvalue()


def lines_of(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def test_load_contracts_loads_the_demo_estate(db):
    output = lines_of(load(ESTATE))

    for label in ("collections-contact-release@7.3", "warehouse-pick@1.0", "dispatch-card@2.2"):
        assert f"contract {label}: loaded" in output
    assert "source case-service: created" in output
    contract = Contract.objects.get(decision_class="collections-contact-release", version="7.3")
    assert contract.purpose == "collections"
    assert contract.contradictions == "escalate"
    assert contract.commit_window_seconds == 120
    fields = {
        f.name: (f.source.name, f.required, f.max_age_seconds, f.evidence_required)
        for f in ContractField.objects.filter(contract=contract)
    }
    assert fields == {
        "collections_status": ("case-service", True, 300, True),
        "complaint_status": ("complaints-service", False, 600, False),
    }
    kinds = sorted(rule.kind for rule in PolicyRule.objects.filter(contract=contract))
    assert kinds == ["allow", "deny", "escalate"]


def test_loading_the_same_version_again_is_unchanged(db):
    load(ESTATE)
    counts = (Contract.objects.count(), PolicyRule.objects.count())

    output = lines_of(load(ESTATE))

    assert "contract collections-contact-release@7.3: unchanged" in output
    assert "source case-service: updated" in output
    assert not [line for line in output if line.endswith(": loaded")]
    assert (Contract.objects.count(), PolicyRule.objects.count()) == counts


def test_same_class_and_version_with_other_content_is_refused_as_immutable(db, tmp_path):
    load(ESTATE)
    changed = (
        (ESTATE / "collections-contact-release.yaml")
        .read_text()
        .replace("max_age_seconds: 300", "max_age_seconds: 3000")
    )
    path = write_yaml(tmp_path, "collections.yaml", changed)

    with pytest.raises(CommandError, match="immutable") as caught:
        load(path)

    assert str(caught.value).startswith(f"{path}:2: ")
    field = ContractField.objects.get(contract__version="7.3", name="collections_status")
    assert field.max_age_seconds == 300


def test_a_new_version_of_a_loaded_class_is_a_new_contract(db, tmp_path):
    load(ESTATE)
    newer = (
        (ESTATE / "collections-contact-release.yaml")
        .read_text()
        .replace('version: "7.3"', 'version: "7.4"')
    )
    output = lines_of(load(write_yaml(tmp_path, "collections.yaml", newer)))
    assert "contract collections-contact-release@7.4: loaded" in output
    assert Contract.objects.filter(decision_class="collections-contact-release").count() == 2


def test_an_action_writing_a_field_folded_from_events_is_refused_at_its_line(db, tmp_path):
    # The owner of an event-sourced field takes events, never a write: such an action would
    # be offered in every `allow` snapshot and refused by the owner at every commit.
    letter = (ESTATE / "collections-letter.yaml").read_text()
    writable = "send_collections_letter: {field: letter_status, values: [sent]}"
    assert writable in letter
    folded = letter.replace(writable, "send_collections_letter: {field: collections_eligible}")
    path = write_yaml(tmp_path, "collections-letter.yaml", folded)
    line = 1 + folded.splitlines().index("actions:") + 1

    with pytest.raises(CommandError, match="folded from events") as caught:
        load(ESTATE / "hardship-ledger.yaml", ESTATE / "correspondence-service.yaml", path)

    assert str(caught.value).startswith(f"{path}:{line}: "), str(caught.value)
    assert not Contract.objects.exists()


def test_two_new_versions_of_a_class_in_one_load_are_refused(db, tmp_path):
    # Each would go live in turn, in file-name order: "7.9" after "7.10".
    newer = (ESTATE / "collections-contact-release.yaml").read_text()
    folder = tmp_path / "release"
    folder.mkdir()
    write_yaml(folder, "a-7.10.yaml", newer.replace('version: "7.3"', 'version: "7.10"'))
    write_yaml(folder, "b-7.9.yaml", newer.replace('version: "7.3"', 'version: "7.9"'))

    with pytest.raises(CommandError, match="both new: load one new version") as caught:
        load(ESTATE / "case-service.yaml", ESTATE / "complaints-service.yaml", folder)

    assert str(caught.value).startswith(f"{folder / 'b-7.9.yaml'}:2: ")
    assert not Contract.objects.exists()


def test_a_version_a_reviewer_is_activating_is_reported_not_a_traceback(db, tmp_path, reviewer):
    from reconcile_app.services.contract_lifecycle import contract_activation_request

    files = (
        write_yaml(tmp_path, "lab.yaml", LAB_SOURCE),
        write_yaml(tmp_path, "lab-check.yaml", LAB_CONTRACT),
    )
    call_command("load_contracts", "--draft", *map(str, files), stdout=StringIO())
    contract = Contract.objects.get(decision_class="lab-check")
    contract_activation_request(contract=contract, actor=reviewer.user, rationale="going live")
    out = StringIO()

    with pytest.raises(CommandError, match="left as drafts: lab-check@1"):
        call_command("load_contracts", *map(str, files), stdout=out)

    assert "contract lab-check@1: level" in out.getvalue()
    assert "draft: not started:" in out.getvalue()


def test_a_reducer_that_is_not_registered_is_refused_even_with_nothing_to_fold(db, tmp_path):
    # Every snapshot records the contract's reducer as what folded its fields.
    source = write_yaml(tmp_path, "lab.yaml", LAB_SOURCE)
    named = LAB_CONTRACT + 'reducer: "nonexistent@9"\n'
    contract = write_yaml(tmp_path, "lab-check.yaml", named)

    with pytest.raises(CommandError, match="'nonexistent@9' is not registered") as caught:
        load(source, contract)

    assert str(caught.value).startswith(f"{contract}:19: ")
    assert not Contract.objects.exists()


def test_valid_lab_files_load(db, tmp_path):
    output = lines_of(
        load(
            write_yaml(tmp_path, "lab.yaml", LAB_SOURCE),
            write_yaml(tmp_path, "lab-check.yaml", LAB_CONTRACT),
        )
    )
    assert "contract lab-check@1: loaded" in output
    assert "source lab-service: created" in output


INVALID = {
    # name: (old text, new text, line reported, words in the reason)
    "bad-cel-syntax": ("'fields.level > 3'", "'fields.level >'", 13, "CEL"),
    "cel-reads-claims": ("'fields.level > 3'", "'claims.level > 3'", 13, "fields"),
    "unknown-source": (
        "{field: level, source: lab-service",
        "{field: level, source: nowhere",
        5,
        "unknown source",
    ),
    "action-on-optional-field": ("adjust: {field: level}", "adjust: {field: flag}", 9, "required"),
    "action-on-unread-field": ("adjust: {field: level}", "adjust: {field: colour}", 9, "required"),
    "field-not-owned": ("- {field: level,", "- {field: colour,", 5, "does not own"),
    "unquoted-version": ('version: "1"\npurpose', "version: 1.0\npurpose", 2, "quoted"),
    "typo-key": ("contradictions: escalate", "contradiction: escalate", 18, "unknown key"),
    "policy-typo-key": ("  allow:\n", "  alow:\n", 15, "unknown key"),
    "top-level-typo-key": ("required:\n", "requried:\n", 4, "unknown key"),
    "yaml-syntax": ("purpose: testing", "purpose: testing: again", 3, "YAML"),
    "permits-unknown-action": ("permits: [adjust]", "permits: [launch]", 17, "launch"),
    "deny-without-code": ("      code: too_high\n", "", 13, "code"),
    # Numbers no column holds, values no snapshot can record, versions no URL can name.
    "window-beyond-a-day": (
        "contradictions: escalate",
        "contradictions: escalate\ncommit_window_seconds: 99999999999999999999",
        19,
        "commit_window_seconds",
    ),
    "max-age-beyond-a-year": (
        "max_age_seconds: 300}\noptional",
        "max_age_seconds: 99999999999999999999}\noptional",
        5,
        "max_age_seconds",
    ),
    "value-not-finite": (
        "adjust: {field: level}",
        "adjust: {field: level, values: [.nan]}",
        9,
        "finite",
    ),
    "version-with-a-slash": ('version: "1"\npurpose', 'version: "a/b"\npurpose', 2, "version"),
    "version-too-long": (
        'version: "1"\npurpose',
        f'version: "{"9" * 51}"\npurpose',
        2,
        "50 characters",
    ),
    # A chain of ~15,000 terms compiled, then crashed (SIGSEGV) the worker running its
    # gates; 2,000 are over the cap and safe to evaluate.
    "condition-too-long": (
        "'fields.level > 3'",
        "'" + " + ".join(["1"] * 2_000) + " > 3'",
        13,
        "at most 4,096 characters",
    ),
    # YAML keeps the last of two equal keys: the first deny rule would vanish unseen.
    "repeated-key": (
        "contradictions: escalate",
        "  deny:\n    - when: 'false'\n      code: never\ncontradictions: escalate",
        18,
        "appears twice (first on line 12)",
    ),
}


@pytest.mark.parametrize("case", sorted(INVALID))
def test_invalid_contract_is_rejected_with_path_line_and_reason(db, tmp_path, case):
    old, new, line, words = INVALID[case]
    assert old in LAB_CONTRACT
    source = write_yaml(tmp_path, "lab.yaml", LAB_SOURCE)
    contract = write_yaml(tmp_path, "lab-check.yaml", LAB_CONTRACT.replace(old, new, 1))

    with pytest.raises(CommandError) as caught:
        load(source, contract)

    message = str(caught.value)
    assert message.startswith(f"{contract}:{line}: "), message
    assert words.lower() in message.lower()
    assert not Source.objects.exists()
    assert not Contract.objects.exists()


@pytest.mark.parametrize(
    ("old", "new", "line", "words"),
    [
        ("adapter: sandbox", "adapter: os.path.join", 3, "adapter"),
        ("adapter: sandbox", "adapter: no.such.module.Adapter", 3, "adapter"),
        ("consistency: linearizable", "consistency: psychic", 4, "consistency"),
        ("fact_classes: [level, flag]", "fact_clases: [level, flag]", 6, "unknown key"),
    ],
)
def test_invalid_source_is_rejected_with_path_line_and_reason(db, tmp_path, old, new, line, words):
    source = write_yaml(tmp_path, "lab.yaml", LAB_SOURCE.replace(old, new))

    with pytest.raises(CommandError) as caught:
        load(source)

    assert str(caught.value).startswith(f"{source}:{line}: "), str(caught.value)
    assert words in str(caught.value)
    assert not Source.objects.exists()


def test_nothing_is_written_when_any_file_in_the_batch_is_invalid(db, tmp_path):
    good_source = write_yaml(tmp_path, "a-lab.yaml", LAB_SOURCE)
    good_contract = write_yaml(tmp_path, "b-lab-check.yaml", LAB_CONTRACT)
    bad = write_yaml(
        tmp_path,
        "c-broken.yaml",
        LAB_CONTRACT.replace("decision_class: lab-check", "decision_class: lab-broken").replace(
            "'true'", "'fields.level >>> 1'"
        ),
    )

    with pytest.raises(CommandError):
        load(ESTATE, good_source, good_contract, bad)

    assert not Source.objects.exists()
    assert not Contract.objects.exists()


def test_nothing_is_written_when_an_immutable_conflict_is_found_late(db, tmp_path):
    load(ESTATE)
    sources, contracts = Source.objects.count(), Contract.objects.count()
    conflicting = write_yaml(
        tmp_path,
        "z-collections.yaml",
        (ESTATE / "collections-contact-release.yaml").read_text().replace("300", "301"),
    )

    with pytest.raises(CommandError, match="immutable"):
        load(
            write_yaml(tmp_path, "a-lab.yaml", LAB_SOURCE),
            write_yaml(tmp_path, "b-lab-check.yaml", LAB_CONTRACT),
            conflicting,
        )

    assert (Source.objects.count(), Contract.objects.count()) == (sources, contracts)
    assert not Source.objects.filter(name="lab-service").exists()


def test_a_folder_without_yaml_is_an_error(db, tmp_path):
    with pytest.raises(CommandError):
        load(tmp_path)
