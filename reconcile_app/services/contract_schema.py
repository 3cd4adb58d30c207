"""Validate source and contract documents (one YAML file each) before anything is written.

Every refusal is a ContractFileError naming the file and the line of the offending key, so a
deployer fixes the file, not a guess. CEL conditions are compiled here: a broken policy never
goes live.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from math import isfinite
from typing import Any

from reconcile_app import policy
from reconcile_app.canonical import content_hash
from reconcile_app.choices import ContradictionPolicy
from reconcile_app.limits import identifier_problem
from reconcile_app.obligation import OBLIGATION_VALUES, obligation_level
from reconcile_app.reconciliation.decision import ENGINE_REASON_CODES
from reconcile_app.reducers import reducer_named
from reconcile_app.services.contract_files import ParsedFile

SLUG = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,149}$")
IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,149}$")
REDUCER = re.compile(r"^[a-z0-9][a-z0-9_.-]*@[A-Za-z0-9_.-]+$")
# Capabilities are `PREFIX:NAME`; a decision class may not take the name of another kind.
RESERVED_CAPABILITY_PREFIXES = frozenset({"attest", "fact"})
MAX_AGE_SECONDS_MOST = 366 * 86400

CONTRACT_KEYS = {
    "decision_class",
    "version",
    "purpose",
    "required",
    "optional",
    "actions",
    "policy",
    "contradictions",
    "commit_window_seconds",
    "reducer",
    "obligation",
    "description",
}


def require_key(
    parsed: ParsedFile, data: dict[str, Any], key: str, kind: type, *where: str | int
) -> Any:
    if key not in data:
        raise parsed.fail(f"missing `{key}`", *where)
    value = data[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise parsed.fail(f"`{key}` must be a {kind.__name__}", *where, key)
    return value


def refuse_unknown_keys(
    parsed: ParsedFile, data: dict[str, Any], allowed: set[str], *where: str | int
) -> None:
    for key in data:
        if key not in allowed:
            raise parsed.fail(f"unknown key `{key}`", *where, key)


def obligation_values(parsed: ParsedFile, data: dict[str, Any]) -> dict[str, str] | None:
    """The reconstruction obligation assessment: all four answers, or none at all (the strict
    default); a partial assessment would read as comfortable answers nobody gave."""
    obligation = data.get("obligation")
    if obligation is None:
        return None
    if not isinstance(obligation, dict):
        raise parsed.fail("`obligation` must be a mapping", "obligation")
    refuse_unknown_keys(parsed, obligation, set(OBLIGATION_VALUES), "obligation")
    for question, answers in OBLIGATION_VALUES.items():
        if obligation.get(question) not in answers:
            raise parsed.fail(
                f"`obligation.{question}` must be one of {' | '.join(answers)}",
                "obligation",
                *([question] if question in obligation else []),
            )
    return {question: obligation[question] for question in OBLIGATION_VALUES}


def _field_specs(parsed: ParsedFile, sources: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    data = parsed.data
    specs: list[dict[str, Any]] = []
    seen: set[str] = set()
    for section, required in (("required", True), ("optional", False)):
        entries = data.get(section, [])
        if entries is None:
            entries = []
        if not isinstance(entries, list):
            raise parsed.fail(f"`{section}` must be a list", section)
        for index, entry in enumerate(entries):
            where = (section, index)
            if not isinstance(entry, dict):
                raise parsed.fail("each field must be a mapping", *where)
            refuse_unknown_keys(
                parsed, entry, {"field", "source", "max_age_seconds", "evidence"}, *where
            )
            name = require_key(parsed, entry, "field", str, *where)
            if not IDENT.match(name):
                raise parsed.fail(f"field {name!r} is not an identifier", *where, "field")
            if name in seen:
                raise parsed.fail(f"field {name} is listed twice", *where, "field")
            seen.add(name)
            source_name = require_key(parsed, entry, "source", str, *where)
            source = sources.get(source_name)
            if source is None:
                raise parsed.fail(f"unknown source {source_name!r}", *where, "source")
            if name not in source["fact_classes"]:
                raise parsed.fail(
                    f"source {source_name} does not own {name} (its fact_classes: "
                    f"{', '.join(source['fact_classes']) or 'none'})",
                    *where,
                    "source",
                )
            max_age = require_key(parsed, entry, "max_age_seconds", int, *where)
            if isinstance(max_age, bool) or not 1 <= max_age <= MAX_AGE_SECONDS_MOST:
                raise parsed.fail(
                    f"`max_age_seconds` must be 1 to {MAX_AGE_SECONDS_MOST:,} (a year)",
                    *where,
                    "max_age_seconds",
                )
            evidence = entry.get("evidence", "optional")
            if evidence not in ("required", "optional"):
                raise parsed.fail("`evidence` must be required or optional", *where, "evidence")
            specs.append(
                {
                    "name": name,
                    "source": source_name,
                    "required": required,
                    "max_age_seconds": max_age,
                    "evidence_required": evidence == "required",
                }
            )
    if not any(spec["required"] for spec in specs):
        raise parsed.fail("a contract needs at least one required field", "required")
    return specs


@dataclass(frozen=True)
class ActionValues:
    field: str
    values: list[Any] | None  # None: any value the policy allows


def _action_values(parsed: ParsedFile, name: str, body: dict[str, Any]) -> list[Any] | None:
    if "values" not in body or body["values"] is None:
        return None
    values = body["values"]
    if not isinstance(values, list) or not values:
        raise parsed.fail(
            f"action {name}: `values` must be a non-empty list", "actions", name, "values"
        )
    for index, value in enumerate(values):
        # NaN and infinity have no JSON spelling: the snapshot could not record them.
        if isinstance(value, dict | list) or (isinstance(value, float) and not isfinite(value)):
            raise parsed.fail(
                f"action {name}: each of `values` must be a string, a finite number, a boolean "
                "or null",
                "actions",
                name,
                "values",
                index,
            )
    return values


def _actions(parsed: ParsedFile, specs: list[dict[str, Any]]) -> dict[str, ActionValues]:
    raw = require_key(parsed, parsed.data, "actions", dict)
    required = {spec["name"] for spec in specs if spec["required"]}
    actions: dict[str, ActionValues] = {}
    for name, body in raw.items():
        if not isinstance(name, str) or not IDENT.match(name):
            raise parsed.fail(f"action {name!r} is not an identifier", "actions", str(name))
        if not isinstance(body, dict) or "field" not in body:
            raise parsed.fail(f"action {name} needs `field`", "actions", name)
        refuse_unknown_keys(parsed, body, {"field", "values"}, "actions", name)
        target = body["field"]
        if target not in required:
            raise parsed.fail(
                f"action {name} writes {target!r}, which is not a required field of this "
                "contract (the snapshot must hold the version to commit against)",
                "actions",
                name,
                "field",
            )
        actions[name] = ActionValues(field=target, values=_action_values(parsed, name, body))
    return actions


def _rules(
    parsed: ParsedFile, actions: dict[str, ActionValues], fields: list[str]
) -> tuple[str, list[dict[str, Any]]]:
    body = require_key(parsed, parsed.data, "policy", dict)
    refuse_unknown_keys(parsed, body, {"version", "deny", "escalate", "allow"}, "policy")
    version = body.get("version")
    if not isinstance(version, str) or not version:
        raise parsed.fail("`policy.version` must be a quoted string", "policy", "version")
    rules: list[dict[str, Any]] = []
    for kind in ("deny", "escalate", "allow"):
        entries = body.get(kind) or []
        if not isinstance(entries, list):
            raise parsed.fail(f"`policy.{kind}` must be a list", "policy", kind)
        for index, entry in enumerate(entries):
            where = ("policy", kind, index)
            if not isinstance(entry, dict):
                raise parsed.fail("each rule must be a mapping", *where)
            allowed = {"when", "permits"} if kind == "allow" else {"when", "code"}
            refuse_unknown_keys(parsed, entry, allowed, *where)
            when = entry.get("when")
            if isinstance(when, bool):
                when = "true" if when else "false"
            if not isinstance(when, str) or not when.strip():
                raise parsed.fail("`when` must be a CEL expression string", *where, "when")
            try:
                policy.compiled(when)
            except policy.PolicyCompileError as exc:
                raise parsed.fail(f"invalid CEL condition: {exc}", *where, "when") from exc
            if problem := _unread_member(when, fields):
                raise parsed.fail(problem, *where, "when")
            code = ""
            permits: list[str] = []
            if kind == "allow":
                permits = entry.get("permits") or []
                if not isinstance(permits, list) or not permits:
                    raise parsed.fail("an allow rule needs a non-empty `permits` list", *where)
                for position, action in enumerate(permits):
                    if action not in actions:
                        raise parsed.fail(
                            f"permits unknown action {action!r}", *where, "permits", position
                        )
            else:
                declared = entry.get("code")
                if not isinstance(declared, str) or not IDENT.match(declared):
                    raise parsed.fail(f"a {kind} rule needs an identifier `code`", *where, "code")
                if declared in ENGINE_REASON_CODES:
                    raise parsed.fail(
                        f"`code` {declared} is one the engine gives for its own reasons; an "
                        "agent would read it as that. Name the rule's own reason",
                        *where,
                        "code",
                    )
                code = declared
            rules.append(
                {
                    "kind": kind,
                    "position": index,
                    "expression": when,
                    "code": code,
                    "permits": permits,
                }
            )
    if not any(rule["kind"] == "allow" for rule in rules):
        raise parsed.fail("a policy needs at least one allow rule", "policy")
    return version, rules


def _unread_member(expression: str, fields: list[str]) -> str | None:
    """A condition naming a field the contract does not read (or a member `effect` lacks)
    is never true of a live decision: `has(fields.typo)` is false, and without `has` it
    fails closed. Said at load, where the author can see it."""
    named = policy.members_read(expression)
    for name in sorted(named["fields"] - set(fields)):
        return (
            f"condition reads fields.{name}, which is not a field of this contract "
            f"(its fields: {', '.join(fields)})"
        )
    for name in sorted(named["effect"] - policy.EFFECT_MEMBERS):
        return f"condition reads effect.{name}; `effect` holds only action and value"
    return None


def contract_values(parsed: ParsedFile, sources: dict[str, dict[str, Any]]) -> dict[str, Any]:
    data = parsed.data
    refuse_unknown_keys(parsed, data, CONTRACT_KEYS)
    decision_class = require_key(parsed, data, "decision_class", str)
    if not SLUG.match(decision_class):
        raise parsed.fail("`decision_class` must be a lower-case slug", "decision_class")
    if decision_class in RESERVED_CAPABILITY_PREFIXES:
        raise parsed.fail(
            f"`{decision_class}` names a kind of capability ({decision_class}:…), not a "
            "decision class",
            "decision_class",
        )
    version = data.get("version")
    if not isinstance(version, str) or not version:
        raise parsed.fail('`version` must be a quoted string, e.g. "7.3"', "version")
    # It is a path segment of the API (`/contracts/{class}/{version}`) and a 50-character column.
    if (problem := identifier_problem(version)) or len(version) > 50:
        raise parsed.fail(f"`version` {problem or 'must be at most 50 characters'}", "version")
    purpose = require_key(parsed, data, "purpose", str)
    specs = _field_specs(parsed, sources)
    actions = _actions(parsed, specs)
    policy_version, rules = _rules(parsed, actions, [spec["name"] for spec in specs])
    contradictions = data.get("contradictions", ContradictionPolicy.ESCALATE.value)
    if contradictions not in ContradictionPolicy.values:
        raise parsed.fail("`contradictions` must be escalate or refuse", "contradictions")
    window = data.get("commit_window_seconds", 120)
    if not isinstance(window, int) or isinstance(window, bool) or not 1 <= window <= 86400:
        raise parsed.fail(
            "`commit_window_seconds` must be 1 to 86,400 (a day: a snapshot authorises a commit "
            "against the state it read, not for ever)",
            "commit_window_seconds",
        )
    reducer = data.get("reducer") or ""
    if reducer and (not isinstance(reducer, str) or not REDUCER.match(reducer)):
        raise parsed.fail('`reducer` must be null or "name@version"', "reducer")
    folded_fields = [
        spec for spec in specs if sources[spec["source"]].get("mode") == "event_sourced"
    ]
    shipped = reducer_named(reducer) if reducer else None
    # A named reducer is recorded on every snapshot: never one that does not exist.
    if (folded_fields or reducer) and shipped is None:
        raise parsed.fail(
            f"fields from event-sourced sources need a registered reducer, not {reducer!r}"
            if folded_fields
            else f"reducer {reducer!r} is not registered",
            "reducer",
        )
    for spec in folded_fields:
        if shipped is not None and spec["name"] not in shipped.fields:
            raise parsed.fail(f"reducer {reducer} does not produce {spec['name']}", "reducer")
    for name, action in actions.items():
        if action.field in {spec["name"] for spec in folded_fields}:
            message = f"action {name} writes {action.field!r}, which is folded from events"
            raise parsed.fail(f"{message}: its owner takes events, not writes", "actions", name)
    obligation = obligation_values(parsed, data)
    return {
        "obligation": obligation,
        "level": obligation_level(obligation),
        "decision_class": decision_class,
        "version": version,
        "purpose": purpose,
        "policy_version": policy_version,
        "contradictions": contradictions,
        "commit_window_seconds": window,
        "reducer": reducer,
        "document": data,
        "content_hash": content_hash(data),
        "fields": specs,
        "actions": actions,
        "rules": rules,
    }
