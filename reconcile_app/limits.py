"""Input limits (docs/api.md "Input limits"): identifiers and single values.

Identifiers end up in owner URLs (`records/{subject}/{field}`), in lineage node ids and in
log lines, so they are kept to what cannot be read as a path, a separator or a control
sequence anywhere downstream. A single value is capped so that one field of one request
cannot be the whole of a snapshot, a ledger entry or an owner write.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from reconcile_app.canonical import canonical_json
from reconcile_app.errors import DomainError, ValidationFailed

MAX_IDENTIFIER_LENGTH = 200
MAX_VALUE_BYTES = 64 * 1024
# A person's reason, rationale or note (the API's serializers and the console's forms).
MAX_REASON_CHARACTERS = 4000
DOT_SEGMENTS = frozenset({".", ".."})


# Characters that show nothing: controls, format characters (zero-width space and joiners,
# the byte-order mark, bidi marks), separators, marks with no base, and the letters drawn
# blank (Hangul fillers, the blank Braille pattern) that pass for text in a name or a reason.
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp", "Mn", "Me"})
BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def says_nothing(text: object) -> bool:
    """True when a reason, rationale or note holds nothing a reader can see: missing, not a
    string, or only spaces and invisible characters. Audit rows say why an operator acted; a
    reason of zero-width spaces passes `str.strip()` and tells the auditor nothing."""
    if not isinstance(text, str):
        return True
    return all(
        character.isspace()
        or character in BLANK_LETTERS
        or unicodedata.category(character) in _INVISIBLE_CATEGORIES
        for character in text
    )


def reason_length_check(reason: str) -> None:
    """400 `reason_too_long`: a reason is refused whole, never cut (a cut reason is not what
    was written)."""
    if len(reason) > MAX_REASON_CHARACTERS:
        raise ValidationFailed(
            f"a reason is at most {MAX_REASON_CHARACTERS:,} characters", code="reason_too_long"
        )


def identifier_problem(value: str) -> str | None:
    """Why `value` is not a valid identifier, or None when it is."""
    if not 1 <= len(value) <= MAX_IDENTIFIER_LENGTH:
        return f"must be 1-{MAX_IDENTIFIER_LENGTH} characters"
    if value in DOT_SEGMENTS:
        return "may not be '.' or '..'"
    if "/" in value or "\\" in value:
        return "may not contain '/' or '\\'"
    # Every whitespace character but the space is unprintable to Python (a separator or a
    # control character): two scans in C where a loop per character cost ~1 µs an identifier.
    if " " in value or not value.isprintable():
        return "may not contain whitespace or control characters"
    return None


def identifier_check(value: Any, name: str) -> str:
    """The identifier itself, or a 400 `invalid_identifier` naming what is wrong."""
    if not isinstance(value, str):
        raise ValidationFailed(f"{name} must be a string", code="invalid_identifier", name=name)
    problem = identifier_problem(value)
    if problem is not None:
        raise ValidationFailed(f"{name} {problem}", code="invalid_identifier", name=name)
    return value


# A lone UTF-16 surrogate: Python's JSON decoder makes one from "\ud800", but no UTF-8 can
# spell it, so no encoder, renderer or database driver takes it.
_SURROGATE = re.compile("[\ud800-\udfff]")


# Deeper values decode, but every walk over them (canonical JSON for hashes, snapshot
# content, replay) recurses once or twice a level: at ~470 levels the 64 KiB check itself
# raised RecursionError, a 500 on evidence, claims, memories and sandbox writes, and a value
# that passed in the web process could still break deeper walks in a worker.
MAX_JSON_DEPTH = 100


def json_unstorable(value: Any) -> str | None:
    """Why a decoded JSON value cannot be stored faithfully (a string or key holding NUL or a
    lone surrogate, or nesting deeper than `MAX_JSON_DEPTH`), or None when it can."""
    try:
        return _unstorable(value, 0)
    except RecursionError:
        return "JSON nested too deeply"


def _unstorable(value: Any, depth: int) -> str | None:
    if isinstance(value, dict | list) and depth >= MAX_JSON_DEPTH:
        return f"JSON nested too deeply (more than {MAX_JSON_DEPTH} levels)"
    if isinstance(value, str):
        # NUL: PostgreSQL's text and jsonb refuse it.
        if "\x00" in value:
            return "JSON strings may not contain the NUL character (\\u0000)"
        if value.isascii() or _SURROGATE.search(value) is None:
            return None
        return "JSON strings may not contain a lone surrogate (\\ud800-\\udfff): it is no text"
    if isinstance(value, dict):
        for key, item in value.items():
            problem = _unstorable(key, depth) or _unstorable(item, depth + 1)
            if problem is not None:
                return problem
    elif isinstance(value, list):
        for item in value:
            problem = _unstorable(item, depth + 1)
            if problem is not None:
                return problem
    return None


class ValueTooLarge(DomainError):
    status = 422
    code = "value_too_large"
    title = "Value too large"


def value_check(value: Any, name: str = "value") -> Any:
    """The value itself, or a 422 `value_too_large` when its JSON is over 64 KiB."""
    size = len(canonical_json(value).encode("utf-8"))
    if size > MAX_VALUE_BYTES:
        raise ValueTooLarge(
            f"{name} is {size} bytes as JSON; the limit is {MAX_VALUE_BYTES}",
            name=name,
            limit=MAX_VALUE_BYTES,
        )
    return value
