"""Plausible values for a contract's fields, read off its own policy and actions.

The gates evaluate the contract on synthetic states, so they need values an owner could
plausibly return: the literals the rules compare a field against (`fields.x == "hold"`,
`fields.n > 3`, `fields.x in ["a", "b"]`), the values the actions may write there, and a
neutral string no rule names. A field a rule uses as a condition by itself
(`fields.hardship_active && ...`) is a boolean, and one compared by order or converted
(`double(fields.level) * 1.5`) is a number: those get no neutral string, which would make
the condition fail for a reason of the gate's own making rather than the contract's.

This reads the expressions with patterns, not a CEL parser: a value it misses only narrows
the states tried; a rule that reads `fields` some other way still runs with every field
present and absent.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from reconcile_app.reconciliation.types import ContractSpec

NEUTRAL = "release-gate-neutral"
# A value no rule names and no action writes: what "another value" is when nothing else is.
OTHER = "release-gate-other"

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_REF = rf"fields\.(?P<name>{_IDENT})"
# A field converted where it is compared (`double(fields.x) > 500.0`, as docs/api.md advises
# for numbers): the comparison is the field's, and the call's argument is no condition.
_CONVERSION = r"(?:int|uint|double|string)\(\s*"
_OPERAND = rf"(?P<conversion>{_CONVERSION})?{_REF}(?(conversion)\s*\))"
_LITERAL = r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|-?\d+(?:\.\d+)?|true|false|null"
_OPERATOR = r"==|!=|<=|>=|<|>"
_REF_THEN_LITERAL = re.compile(rf"{_OPERAND}\s*(?P<op>{_OPERATOR})\s*(?P<literal>{_LITERAL})")
_LITERAL_THEN_REF = re.compile(rf"(?P<literal>{_LITERAL})\s*(?P<op>{_OPERATOR})\s*{_OPERAND}")
_REF_IN_LIST = re.compile(rf"{_REF}\s+in\s+\[(?P<items>[^\]]*)\]")
_LITERALS = re.compile(_LITERAL)
_ANY_REF = re.compile(_REF)
# A field a rule converts to a number anywhere, compared or computed with (`double(fields.x)
# * 1.5`, `int(fields.n) + 1`, docs/api.md's examples): a neutral text would not convert.
_CONVERTED = re.compile(rf"(?<![\w.])(?:int|uint|double)\(\s*{_REF}\s*\)")
_CALL_OPENS = re.compile(rf"{_IDENT}\s*\($")
_ORDERING = frozenset({"<", "<=", ">", ">="})


def literal_value(text: str) -> Any:
    """A CEL literal as the Python value the CEL binding passes back and forth."""
    if text in ("true", "false"):
        return text == "true"
    if text == "null":
        return None
    if text[0] in "\"'":
        try:
            return ast.literal_eval(text)
        except (ValueError, SyntaxError):
            return text[1:-1]
    return float(text) if "." in text else int(text)


def _boolean_uses(expression: str) -> set[str]:
    """Fields a condition uses as a boolean on their own: `fields.x`, `!fields.x`,
    `fields.x && ...` (but not `has(fields.x)`, which tests presence, nor any other call's
    argument: `double(fields.x)`, `size(fields.x)`)."""
    found = set()
    for match in _ANY_REF.finditer(expression):
        before = expression[: match.start()].rstrip()
        after = expression[match.end() :].lstrip()
        if _CALL_OPENS.search(before):
            continue
        opens = before == "" or before.endswith(("(", "!", "&&", "||"))
        closes = after == "" or after.startswith((")", "&&", "||", "?"))
        if opens and closes:
            found.add(match.group("name"))
    return found


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def same_literal(left: Any, right: Any) -> bool:
    """Equal as CEL sees values: `True == 1` and `1 == 1.0` in Python, not in CEL, so the
    type counts (canonical.same_value would merge 1 and 1.0)."""
    return type(left) is type(right) and left == right


def _add(values: list[Any], value: Any) -> None:
    if not any(same_literal(value, seen) for seen in values):
        values.append(value)


def field_candidates(spec: ContractSpec) -> dict[str, list[Any]]:
    """Each contract field's plausible values, in a stable order (the first is the default)."""
    literals: dict[str, list[Any]] = {field.name: [] for field in spec.fields}
    ordered: set[str] = set()
    booleans: set[str] = set()
    numbers: set[str] = set()
    for rule in spec.rules:
        expression = rule.expression
        booleans |= _boolean_uses(expression)
        numbers |= {match.group("name") for match in _CONVERTED.finditer(expression)}
        for pattern in (_REF_THEN_LITERAL, _LITERAL_THEN_REF):
            for match in pattern.finditer(expression):
                name, value = match.group("name"), literal_value(match.group("literal"))
                if name not in literals:
                    continue
                _add(literals[name], value)
                if match.group("op") in _ORDERING and _is_number(value):
                    ordered.add(name)
                    # Both sides of a threshold, in the literal's own numeric type.
                    step = 1.0 if isinstance(value, float) else 1
                    _add(literals[name], value + step)
                    _add(literals[name], value - step)
        for match in _REF_IN_LIST.finditer(expression):
            if match.group("name") in literals:
                for item in _LITERALS.findall(match.group("items")):
                    _add(literals[match.group("name")], literal_value(item))
    for action, target in sorted(spec.actions.items()):
        for value in spec.action_values.get(action) or ():
            _add(literals[target], value)
    candidates: dict[str, list[Any]] = {}
    for field in spec.fields:
        values = list(literals[field.name])
        if field.name in booleans:
            _add(values, True)
            _add(values, False)
        elif field.name in numbers:
            if not any(_is_number(value) for value in values):
                _add(values, 0)  # converted, and no number of its own to try
        elif field.name not in ordered:
            _add(values, NEUTRAL)
        candidates[field.name] = values
    return candidates


def other_values(candidates: list[Any], value: Any) -> list[Any]:
    """The field's other plausible values (those that could change the decision), or one
    value no rule names."""
    others = [item for item in candidates if not same_literal(item, value)]
    return others or [OTHER]


def rule_labels(spec: ContractSpec) -> list[str]:
    """`deny rule 1 (hardship_hold): fields.x == "hold"`, numbered within each kind as
    the contract file lists them. A long rule is quoted by its start: the label is repeated
    in each finding, and the number and code already say which rule (a rule stored before
    conditions were capped may run to tens of kilobytes)."""
    labels = []
    seen: dict[str, int] = {}
    for rule in spec.rules:
        seen[rule.kind] = seen.get(rule.kind, 0) + 1
        code = f" ({rule.code})" if rule.code else ""
        labels.append(f"{rule.kind} rule {seen[rule.kind]}{code} `{quoted_rule(rule.expression)}`")
    return labels


# How much of a rule a label quotes.
RULE_QUOTE_CHARS = 200


def quoted_rule(expression: str) -> str:
    if len(expression) <= RULE_QUOTE_CHARS:
        return expression
    return f"{expression[:RULE_QUOTE_CHARS]}… ({len(expression):,} characters)"
