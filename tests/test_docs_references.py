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
import yaml
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


def _unnamed(path: str) -> str:
    return re.sub(r"\{[^}]*\}", "{}", path)


def documented(path: str, text: str) -> bool:
    """Whether docs/api.md names `path`, whole or in its shorthands: `…/{id}/approve|reject`,
    "`…/{node}/descendants` and `/ancestors`", and the sandbox's paths relative to
    `/api/v1/sandbox/{source}/` (`GET records/{subject}/{field}`)."""
    path = _unnamed(path)
    if path in text:
        return True
    head, _, last = path.rpartition("/")
    alternatives = (
        rf"{re.escape(head)}/[\w-]+\|{re.escape(last)}\b",
        rf"{re.escape(path)}\|",
        rf"{re.escape(head)}/[\w-]+` and `/{re.escape(last)}`",
    )
    if any(re.search(pattern, text) for pattern in alternatives):
        return True
    sandbox = "/api/v1/sandbox/{}/"
    if path.startswith(sandbox):
        relative = re.escape(path.removeprefix(sandbox))
        return re.search(rf"`(?:GET|PUT|POST|DELETE) {relative}[`?\s]", text) is not None
    return False


def test_docs_api_names_every_operation_the_schema_serves():
    # GET /api/v1/audit was served, in the schema and in the README, and absent from the
    # page that says it describes what can be called today.
    schema = yaml.safe_load((BASE_DIR / "docs" / "openapi.yaml").read_text())
    text = _unnamed((BASE_DIR / "docs" / "api.md").read_text())

    assert [path for path in schema["paths"] if not documented(path, text)] == []


def test_docs_api_lists_every_tag_the_schema_uses():
    schema = yaml.safe_load((BASE_DIR / "docs" / "openapi.yaml").read_text())
    tags = {
        tag
        for operations in schema["paths"].values()
        for operation in operations.values()
        if isinstance(operation, dict)
        for tag in operation.get("tags", [])
    }
    text = (BASE_DIR / "docs" / "api.md").read_text()
    listed = set(re.findall(r"`([\w-]+)`", text[text.index("one tag, its resource") :][:400]))

    assert sorted(tags - listed) == []


# `(README, "Soaking it")`, `docs/deploy.md, "Sizing"`, "the repository's README, "For agent
# developers"": a document, then the section a reader should open, by its heading (or the
# first words of it) or a paragraph's bold label.
SECTION = re.compile(r'\b(README|[\w/.]*\w\.md)`?\)?,\s+"([^"\n]+(?:\n[^"\n]+)?)"')
READERS = [*DOCUMENTS, "clients/python/README.md", "examples/README.md"]


def _target(document: str, named: str) -> Path:
    if named in ("README", "README.md"):
        return BASE_DIR / "README.md"
    for candidate in (BASE_DIR / named, BASE_DIR / "docs" / Path(named).name):
        if candidate.exists():
            return candidate
    return BASE_DIR / document


def _sections(path: Path) -> list[str]:
    text = path.read_text()
    headings = re.findall(r"^#+\s+(.+)$", text, re.M)
    labels = re.findall(r"\*\*([^*\n]+?)\.?\*\*", text)
    return [section.strip() for section in [*headings, *labels]]


def missing_sections(document: str) -> list[str]:
    missing = []
    for named, section in SECTION.findall((BASE_DIR / document).read_text()):
        wanted = " ".join(section.split())
        if not any(found.startswith(wanted) for found in _sections(_target(document, named))):
            missing.append(f"{named}, {wanted!r}")
    return missing


@pytest.mark.parametrize("document", READERS)
def test_every_section_a_document_sends_readers_to_exists(document):
    # docs/deploy.md sent readers to README, "Benchmarks", a section the README never had.
    assert missing_sections(document) == []


# A worker or scheduler an operator is told to start: `celery -A config [options] worker|beat`.
CELERY_START = re.compile(r"celery -A config (?:-\S+ )*(?:worker|beat)\b")


def test_every_worker_and_scheduler_the_documents_start_is_quiet():
    """Celery's start-up banner is a block of plain text in a JSON log stream (docs/deploy.md,
    "Logs"): a command copied from the documents starts `celery --quiet`, as ./dev does."""
    loud = [
        f"{document}: {line.strip()}"
        for document in DOCUMENTS
        for line in (BASE_DIR / document).read_text().splitlines()
        if CELERY_START.search(line) and "--quiet" not in line
    ]
    assert loud == []
