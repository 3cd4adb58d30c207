"""The product's documents name files and tests that exist.

README.md and docs/*.md point readers at modules (`reconcile_app/services/effects/gate.py`)
and, in docs/security.md, at the test that shuts each side door
(`tests/test_security.py::test_guessing_api_keys_is_cut_off`, then `::another_test` of the
same file). A module that moved left the threat model naming a file nobody could open.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings

BASE_DIR = Path(settings.BASE_DIR)
DOCUMENTS = ["README.md", *sorted(str(p.relative_to(BASE_DIR)) for p in BASE_DIR.glob("docs/*.md"))]
TOP_LEVEL = ("config", "reconcile_app", "lineage_app", "sandbox_app", "drills_app", "tests")
# A backticked repository path, optionally `::name`; or `::name` alone, continuing the last
# file named (security.md's "`test_gate.py::a`, `::b`"); or a bare test file `name.py::test`.
CODE = re.compile(r"`([^`\s]+)`")
PATH = re.compile(rf"^((?:{'|'.join(TOP_LEVEL)})/[\w./-]+?)(?:::(\w+))?$")
CONTINUED = re.compile(r"^::(\w+)$")
BARE_TEST_FILE = re.compile(r"^(test_\w+\.py)(?:::(\w+))?$")


def defines(path: Path, name: str) -> bool:
    return re.search(rf"^\s*(?:async )?(?:def|class) {name}\b", path.read_text(), re.M) is not None


def broken_references(document: str) -> list[str]:
    broken: list[str] = []
    current: Path | None = None
    for token in CODE.findall((BASE_DIR / document).read_text()):
        name = None
        if match := PATH.match(token.rstrip(".,:")):
            relative, name = match.groups()
            if any(mark in relative for mark in "{}*<>…"):
                continue
            current = BASE_DIR / relative
            if not current.exists():
                broken.append(f"{token}: no such path")
                current = None
                continue
        elif match := BARE_TEST_FILE.match(token):
            found = sorted(BASE_DIR.glob(f"tests/**/{match.group(1)}"))
            if not found:
                broken.append(f"{token}: no such test file")
                continue
            current, name = (found[0] if len(found) == 1 else None), match.group(2)
            if current is None:
                continue
        elif (match := CONTINUED.match(token)) and current is not None:
            name = match.group(1)
        else:
            continue
        if name and current is not None and current.is_file() and not defines(current, name):
            broken.append(f"{token}: {current.relative_to(BASE_DIR)} defines no {name}")
    return broken


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_file_and_test_a_document_names_exists(document):
    assert broken_references(document) == []
