"""load_contracts with memory class files (docs/api.md "Memory classes"): each refused file
names its line and why, nothing of the batch is loaded, and a reload updates in place."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from reconcile_app.models import MemoryClass
from tests.factories import write_yaml

# Line numbers matter: the loader reports `path:line: reason`.
GOOD = """\
memory_class: product-notes
kind: episodic
owner: platform-operations
default_ttl_days: 30
admission: direct
description: Notes about products.
"""


def load(*paths: Path) -> list[str]:
    out = StringIO()
    call_command("load_contracts", *[str(path) for path in paths], stdout=out)
    return [line for line in out.getvalue().splitlines() if line.strip()]


def with_line(line: int, text: str) -> str:
    """GOOD with its `line`-th line (1-based) replaced by `text` ("" drops it)."""
    lines = GOOD.splitlines()
    lines[line - 1] = text
    return "\n".join(item for item in lines if item) + "\n"


def test_a_class_file_is_loaded_and_reported(db, tmp_path):
    output = load(write_yaml(tmp_path, "product-notes.yaml", GOOD))

    assert output == ["memory class product-notes: created"]
    loaded = MemoryClass.objects.get(name="product-notes")
    assert (loaded.kind, loaded.owner, loaded.default_ttl_days, loaded.admission) == (
        "episodic",
        "platform-operations",
        30,
        "direct",
    )
    assert loaded.description == "Notes about products."


def test_reloading_updates_the_class_in_place(db, tmp_path):
    load(write_yaml(tmp_path, "product-notes.yaml", GOOD))
    changed = write_yaml(tmp_path, "product-notes.yaml", with_line(4, "default_ttl_days: 7"))

    assert load(changed) == ["memory class product-notes: updated"]
    assert MemoryClass.objects.get(name="product-notes").default_ttl_days == 7
    assert MemoryClass.objects.filter(name="product-notes").count() == 1


@pytest.mark.parametrize(
    ("line", "text", "reason"),
    [
        (1, "memory_class: 'product notes'", "`memory_class` must be a slug"),
        (2, "", "missing `kind`"),
        (2, "kind: anecdote", "`kind` must be one of"),
        (3, "owner: '  '", "`owner` names who governs the class"),
        (3, "owner: [a, b]", "`owner` must be a str"),
        (4, "default_ttl_days: 0", "positive integer"),
        (4, "default_ttl_days: -3", "positive integer"),
        (4, "default_ttl_days: thirty", "positive integer"),
        (4, "default_ttl_days: true", "positive integer"),
        (4, "default_ttl_days: 36501", "at most 36500"),
        (4, "default_ttl_days: 3000000000", "at most 36500"),
        (5, "admission: sometimes", "`admission` must be direct or review"),
        (6, "description: [not, text]", "`description` must be text"),
        (6, "colour: blue", "unknown key `colour`"),
    ],
)
def test_a_bad_field_is_refused_at_its_line(db, tmp_path, line, text, reason):
    path = write_yaml(tmp_path, "bad.yaml", with_line(line, text))
    with pytest.raises(CommandError) as refused:
        load(path)
    message = str(refused.value)
    assert reason in message, message
    expected_line = line if text else 1
    assert message.startswith(f"{path}:{expected_line}: "), message
    assert not MemoryClass.objects.filter(name="product-notes").exists()


@pytest.mark.parametrize("kind", ["procedural", "policy"])
def test_procedures_and_policy_are_always_admitted_by_review(db, tmp_path, kind):
    text = GOOD.replace("kind: episodic", f"kind: {kind}")
    with pytest.raises(CommandError) as refused:
        load(write_yaml(tmp_path, "rules.yaml", text))
    assert f"{kind} memory is always admitted by review" in str(refused.value)
    assert ":5: " in str(refused.value)  # the admission line

    reviewed = text.replace("admission: direct", "admission: review")
    assert load(write_yaml(tmp_path, "rules.yaml", reviewed)) == [
        "memory class product-notes: created"
    ]


def test_a_fact_class_takes_no_ttl(db, tmp_path):
    text = GOOD.replace("kind: episodic", "kind: fact")
    with pytest.raises(CommandError) as refused:
        load(write_yaml(tmp_path, "facts.yaml", text))
    assert "facts expire by their own valid_until" in str(refused.value)
    assert ":4: " in str(refused.value)


def test_one_bad_class_file_loads_nothing_of_the_batch(db, tmp_path):
    good = write_yaml(tmp_path, "a-good.yaml", GOOD.replace("product-notes", "good-notes"))
    bad = write_yaml(tmp_path, "b-bad.yaml", with_line(2, "kind: anecdote"))
    with pytest.raises(CommandError):
        load(good, bad)
    assert not MemoryClass.objects.filter(name="good-notes").exists()


def test_the_demo_estate_declares_its_classes(db):
    from tests.conftest import MEMORY_CLASSES

    MemoryClass.objects.all().delete()
    output = load(MEMORY_CLASSES)
    assert sorted(output) == [
        f"memory class {name}: created"
        for name in (
            "case-notes",
            "customer-preferences",
            "episodic",
            "house-rules",
            "operational",
            "runbooks",
        )
    ]
