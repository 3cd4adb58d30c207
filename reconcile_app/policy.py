"""CEL policy conditions: compiled once per process, evaluated over state fields only."""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from typing import Any

import cel

from reconcile_app.canonical import normalise_numbers

# Policy may read state values and the proposed effect (its action and, when one was
# proposed, its value) — never a claim: memory is not visible to policy.
ALLOWED_VARIABLES = frozenset({"fields", "effect"})
# The CEL library evaluates a chain of operators by recursing on the native stack: a
# condition of ~15,000 terms (`1 + 1 + ...`, 60 KB) compiles, then kills the process that
# evaluates it (SIGSEGV), which no `except` catches. The release gates evaluate every rule,
# so a Celery worker died on each redelivery of the activation, which stayed `running`.
# Real conditions are a few hundred characters; this cap is far below the crash.
MAX_CONDITION_CHARACTERS = 4096


class PolicyCompileError(ValueError):
    pass


# What `effect` holds (decision.Binding.effect): the proposed action, and the value if any.
EFFECT_MEMBERS = frozenset({"action", "value"})
# Read left to right, as CEL's lexer does: a string literal, or a `//` comment to the line's
# end (CEL's only kind), whatever quote or member either spells.
_NOT_CODE = re.compile(r"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'|(?P<comment>//[^\n]*)")
# A name followed by `(` is a macro over the map (`fields.exists(k, ...)`), not a member.
_MEMBER = re.compile(
    r"(?<![\w.])(?P<variable>fields|effect)\s*"
    r"(?:\.\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?![A-Za-z0-9_]|\s*\()"
    r"|\[\s*(?P<key>\x00\d+)\s*\])"
)
# A key tested with `in` (`"x" in fields`): CEL's other test of presence, as has(fields.x).
_KEY_IN = re.compile(r"(?P<key>\x00\d+)\s*in\s+(?P<variable>fields|effect)(?![\w.\[])")


def members_read(expression: str) -> dict[str, set[str]]:
    """The members of `fields` and `effect` a condition names (`fields.x`, `fields["x"]`,
    `"x" in fields`), read off its text with string literals and comments set aside, so that
    the loader can refuse a name the contract never reads: `has(fields.typo)` evaluates, is
    false for every decision, and no gate can tell it from a field that is merely absent."""
    literals: list[str] = []

    def set_aside(match: re.Match[str]) -> str:
        if match.group("comment"):
            return " "
        literals.append(match.group(0))
        return f"\x00{len(literals) - 1}"

    text = _NOT_CODE.sub(set_aside, expression)
    found: dict[str, set[str]] = {"fields": set(), "effect": set()}
    for match in [*_MEMBER.finditer(text), *_KEY_IN.finditer(text)]:
        if match.groupdict().get("name"):
            found[match.group("variable")].add(match.group("name"))
            continue
        literal = literals[int(match.group("key")[1:])]
        try:
            key = ast.literal_eval(literal)
        except (ValueError, SyntaxError):
            continue
        if isinstance(key, str):
            found[match.group("variable")].add(key)
    return found


@lru_cache(maxsize=4096)
def compiled(expression: str) -> cel.Program:
    """Compile (and cache) a condition; raises PolicyCompileError with the parser's reason."""
    if len(expression) > MAX_CONDITION_CHARACTERS:
        raise PolicyCompileError(
            f"a condition is at most {MAX_CONDITION_CHARACTERS:,} characters, not "
            f"{len(expression):,}"
        )
    try:
        program = cel.compile(expression)
    except (ValueError, TypeError, RuntimeError) as exc:
        raise PolicyCompileError(str(exc).splitlines()[0]) from exc
    # Comprehension variables (e.g. the `x` of `.exists(x, ...)`) appear as identifiers too;
    # anything other than `fields` that is not bound by a macro is an unknown variable.
    unknown = [name for name in program.variables() if name not in ALLOWED_VARIABLES]
    macro_bound = _macro_bound_names(expression)
    unknown = [name for name in unknown if name not in macro_bound]
    if unknown:
        raise PolicyCompileError(
            "conditions may only read `fields` (state values) and `effect` (the proposed "
            f"action and value); found {', '.join(unknown)}"
        )
    return program


def _macro_bound_names(expression: str) -> set[str]:
    import re

    pattern = r"\.(?:all|exists|exists_one|map|filter)\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*,"
    return set(re.findall(pattern, expression))


def variables(
    fields: dict[str, Any], effect: dict[str, Any] | None = None
) -> cel.Context | dict[str, Any]:
    """What every rule of one decision reads, converted to CEL values once.

    Handed a dict, the CEL library converts it again on every evaluation, most of what one
    costs (~25 µs against ~1 µs for the rule itself): a decision evaluates each of its
    contract's rules over the same fields and effect. Values it cannot convert stay a dict,
    so that each rule evaluated over them meets the same error as before and fails closed.
    """
    plain = _plain(fields, effect)
    try:
        return cel.Context(plain)
    except Exception:
        return plain


def evaluate(
    expression: str, fields: dict[str, Any], effect: dict[str, Any] | None = None
) -> bool | None:
    """True or False, or None when the condition cannot be evaluated to a boolean.

    The caller decides what None means: it fails closed (matches deny and escalate, never
    allow).
    """
    return evaluate_explained(expression, fields, effect)[0]


def evaluate_over(expression: str, over: cel.Context | dict[str, Any]) -> bool | None:
    """`evaluate` over the `variables` of a decision."""
    return _evaluated(expression, over)[0]


def evaluate_over_explained(
    expression: str, over: cel.Context | dict[str, Any]
) -> tuple[bool | None, str]:
    """`evaluate_explained` over the `variables` of one state: the release gates evaluate
    every rule over each state they try, and converting the fields again for each rule cost
    them ~1 ms an evaluation with 200 fields (the rule itself, a microsecond)."""
    return _evaluated(expression, over)


def evaluate_explained(
    expression: str, fields: dict[str, Any], effect: dict[str, Any] | None = None
) -> tuple[bool | None, str]:
    """`evaluate`, with why a condition could not be evaluated ("" when it could): the
    release gates report the error, where a decision only fails closed."""
    return _evaluated(expression, _plain(fields, effect))


def _plain(fields: dict[str, Any], effect: dict[str, Any] | None) -> dict[str, Any]:
    """The rules' variables, their numbers as snapshots hash them (an integral 1.0 is 1):
    CEL never mixes doubles and ints (`1.0 + 1` is an error), and PostgreSQL's jsonb gives
    stored values back with 1.0 as 1, so a rule over the spelling would decide a replay, or
    the same owner value on another database, differently."""
    return normalise_numbers({"fields": fields, "effect": effect or {}})  # type: ignore[no-any-return]


def _evaluated(expression: str, over: cel.Context | dict[str, Any]) -> tuple[bool | None, str]:
    try:
        result = compiled(expression).execute(over)
    except Exception as exc:
        return None, f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"
    if isinstance(result, bool):
        return result, ""
    return None, f"evaluated to {result!r}, not a boolean"
