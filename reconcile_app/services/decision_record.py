"""A contract version's architecture decision record (seed 002), as Markdown.

"Record the outcome as an architecture decision record with source owners, freshness budget,
reducer version, required fields, uncertainty representation, refusal path, snapshot
retention and effect readback." Every section is written from what was loaded and recorded —
the version's fields, rules and actions, its sources, its activations — and from what the
product does with them, so the record cannot drift from the contract it describes.

The output is deterministic (no clock is read: every time is a stored one) and is plain
Markdown text: nothing here is HTML, and whoever shows it escapes it. Free text that people
wrote (descriptions, rationales, CEL conditions) is quoted or put in code spans so it cannot
break the document's structure.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from reconcile_app.models import Contract, ContractActivation, ContractField
from reconcile_app.obligation import OBLIGATION_VALUES
from reconcile_app.selectors.contract_versions import (
    ContractVersionDetail,
    contract_version_detail_of,
)

LEVEL_MEANS = {
    "reconstruct": "every release gate must pass before the version goes live",
    "narrative_ok": (
        "no hard trigger: accumulated context may serve between checkpoints, and only the "
        "release gates that keep the gate itself safe must pass before the version goes live"
    ),
}
CONTRADICTIONS_MEAN = {
    "escalate": (
        "a contradiction (a remembered claim against the owner's state, or two sources "
        "disagreeing) escalates the decision to a reviewer, both sides kept as rows; nothing "
        "is authorised until a reviewer approves"
    ),
    "refuse": (
        "a contradiction (a remembered claim against the owner's state, or two sources "
        "disagreeing) refuses the decision (`contradiction`), both sides kept as rows"
    ),
}


def decision_record(contract: Contract) -> str:
    """The version's ADR as Markdown (six queries at most; fewer when parts are fetched)."""
    return decision_record_markdown(contract_version_detail_of(contract))


def decision_record_markdown(detail: ContractVersionDetail) -> str:
    """The ADR of a version whose detail is already read (no query)."""
    contract = detail.contract
    sections = [
        _heading(detail),
        _context(contract),
        _obligation(detail),
        _decision(detail),
        _gates(detail.latest_finished),
        _activation(detail),
    ]
    return "\n\n".join(section.strip("\n") for section in sections) + "\n"


# --- Markdown, safely ---------------------------------------------------------------------------


def code(text: Any) -> str:
    """Inline code that holds any text: the fence is longer than any backtick run inside."""
    value = " ".join(str(text).split("\n"))
    longest, run = 0, 0
    for character in value:
        run = run + 1 if character == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    padding = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{padding}{value}{padding}{fence}"


def cell(text: str) -> str:
    """A table cell: a pipe would end the cell and a newline the row."""
    return " ".join(text.split("\n")).replace("|", "\\|")


def quoted(text: str) -> str:
    """Free text as a block quote, line by line, so it never becomes a heading or a list."""
    return "\n".join(f"> {line}".rstrip() for line in text.strip().splitlines()) or ">"


def when(moment: datetime | None) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC") if moment else "never"


def seconds(value: int) -> str:
    return f"{value} s"


# --- Sections ---------------------------------------------------------------------------------


def _heading(detail: ContractVersionDetail) -> str:
    contract = detail.contract
    lines = [
        f"# ADR: {contract.decision_class} {contract.version}",
        "",
        f"- Status: **{contract.status}**",
        f"- Loaded: {when(contract.loaded_at)}"
        + (f" from {code(contract.source_path)}" if contract.source_path else ""),
        f"- Went live: {when(contract.activated_at)}",
    ]
    if detail.retired_by is not None:
        lines.append(f"- Retired: {when(detail.retired_by.finished_at)}")
    lines.append(f"- Content hash: {code(contract.content_hash)}")
    return "\n".join(lines)


def _context(contract: Contract) -> str:
    description = contract.document.get("description")
    lines = [
        "## Context",
        "",
        f"Decision class {code(contract.decision_class)}, purpose {code(contract.purpose)}: an "
        "agent asks Reconcile before it acts, and Reconcile decides under the class's active "
        "version only — an agent never chooses the rules it is judged by.",
    ]
    if isinstance(description, str) and description.strip():
        lines += ["", quoted(description)]
    return "\n".join(lines)


def _obligation(detail: ContractVersionDetail) -> str:
    contract = detail.contract
    lines = ["## Obligation assessment", ""]
    if contract.obligation:
        lines += ["| question | answer |", "|---|---|"]
        lines += [
            f"| {question} | {cell(str(contract.obligation.get(question, '')))} |"
            for question in OBLIGATION_VALUES
        ]
    else:
        lines.append("Not assessed: the file gives no `obligation`, so the strict default applies.")
    lines += ["", f"Level: **{contract.level}** — {LEVEL_MEANS.get(contract.level, '')}.", ""]
    triggers = detail.triggers
    if triggers:
        lines.append("Hard triggers that selected it:")
        lines += [f"- {trigger}" for trigger in triggers]
    else:
        lines.append("Hard triggers: none.")
    return "\n".join(lines)


def _field_table(fields: list[ContractField]) -> list[str]:
    if not fields:
        return ["None."]
    rows = [
        "| field | source | owner | consistency | expected lag | max age | evidence |",
        "|---|---|---|---|---|---|---|",
    ]
    for item in fields:
        source = item.source
        rows.append(
            f"| {item.name} | {source.name} | {cell(source.owner)} | {source.consistency} | "
            f"{seconds(source.expected_lag_seconds)} | {seconds(item.max_age_seconds)} | "
            f"{'required' if item.evidence_required else 'optional'} |"
        )
    return rows


def _decision(detail: ContractVersionDetail) -> str:
    contract = detail.contract
    lines = [
        "## Decision",
        "",
        "### Required fields (fail closed)",
        "",
        *_field_table(detail.required_fields),
        "",
        "### Optional fields (degrade)",
        "",
        *_field_table(detail.optional_fields),
        "",
        "Freshness budget: each field's max age, judged on the time its owner vouches for "
        "(`observed_at`); an older read is `stale`. Evidence `required`: the value must be "
        "supported by unrevoked evidence in the ledger.",
        "",
        "### Refusal path",
        "",
        "- A required field that is not `ok` (unavailable, timeout, stale, quarantined, "
        "conflict) fails closed: the decision is `refuse` (`state_unavailable`, "
        "`stale_state`, `source_quarantined`, `state_conflict`, with `contract_incomplete`) "
        f"and nothing is authorised. Fails closed on: {_names(detail.required_fields)}.",
        "- A required field with evidence `required` that no unrevoked evidence supports "
        "refuses with `evidence_missing`. Evidence required on: "
        f"{_names([item for item in detail.fields if item.evidence_required])}.",
        "- An optional field that is not `ok` is left out of the policy's `fields` and the "
        f"snapshot is `degraded`. Degrades on: {_names(detail.optional_fields)}.",
        "",
        "### Uncertainty representation",
        "",
        "Every read keeps its status (`ok | unavailable | timeout | stale | quarantined | "
        "conflict`), version, observed and recorded times; the snapshot says `complete | "
        "degraded | incomplete`; each remembered claim gets a verdict with a reason, and "
        "never reaches the policy.",
        "",
        f"Contradictions: **{contract.contradictions}** — "
        f"{CONTRADICTIONS_MEAN.get(contract.contradictions, '')}.",
        "",
        *_policy(detail),
        "",
        *_actions(detail),
        "",
        "### Commit window",
        "",
        f"{seconds(contract.commit_window_seconds)}: a snapshot older than this cannot "
        "authorise a commit (for an escalated one, counted from the reviewer's approval).",
        "",
        "### Reducer",
        "",
        _reducer(detail),
        "",
        "### Snapshot retention",
        "",
        "Snapshots, their reads, verdicts and contradictions, and decision receipts are "
        "append-only and kept: the application refuses UPDATE and DELETE (on PostgreSQL, "
        "triggers refuse them too) and nothing expires them, so a decision can be replayed as "
        "recorded and traced through lineage. Once this version is no longer active, its "
        "snapshots stop authorising commits (`contract_superseded`) but stay.",
        "",
        "### Effect readback",
        "",
        "An effect is recorded before it is sent, against the version its snapshot read "
        "(`If-Match`) with an idempotency key. After the owner's receipt, a worker reads the "
        "target back from the field's owner: `verified` when it holds the written value at "
        "the receipt's version or later, else `postcondition_failed`. An unknown outcome is "
        "settled by asking the owner's effect ledger by idempotency key, then the target; "
        "nothing is re-sent blindly, and what stays unresolved waits for operators.",
    ]
    return "\n".join(lines)


def _names(fields: list[ContractField]) -> str:
    return ", ".join(code(item.name) for item in fields) or "none"


def _reducer(detail: ContractVersionDetail) -> str:
    reducer = detail.contract.reducer
    folded = [item for item in detail.fields if item.source.mode == "event_sourced"]
    if not reducer:
        return "None: every field is read live from its owner."
    if not folded:
        return (
            f"{code(reducer)}, though no field of this version comes from an event-sourced source."
        )
    return (
        f"{code(reducer)}: {_names(folded)} are folded from their owner's events by this "
        "reducer version (deduplicated by event id, ordered by its key; events that cannot be "
        "ordered make the fields `conflict`), and each snapshot records the version."
    )


def _policy(detail: ContractVersionDetail) -> list[str]:
    lines = [
        f"### Policy {code(detail.contract.policy_version)}",
        "",
        "Evaluated in this order, after the engine's refusals: every deny, then every "
        "escalate, then the first allow that matches; a condition that cannot be evaluated "
        "matches deny and escalate and never allow.",
        "",
    ]
    for number, rule in enumerate(detail.rules, start=1):
        if rule.kind == "allow":
            permits = ", ".join(code(action) for action in rule.permits)
            lines.append(f"{number}. allow when {code(rule.expression)}: permits {permits}")
        else:
            lines.append(f"{number}. {rule.kind} {code(rule.code)} when {code(rule.expression)}")
    lines.append(f"{len(detail.rules) + 1}. otherwise: deny `no_rule_matched`")
    return lines


def _actions(detail: ContractVersionDetail) -> list[str]:
    sources = {item.name: item.source.name for item in detail.fields}
    lines = ["### Actions", "", "| action | writes | values |", "|---|---|---|"]
    for action in detail.actions:
        values = (
            ", ".join(cell(json.dumps(value)) for value in action.values)
            if action.values is not None
            else "any value the policy allows"
        )
        owner = sources.get(action.field, "?")
        lines.append(f"| {action.name} | {action.field} (at {owner}) | {values} |")
    return lines


def _gates(report: ContractActivation | None) -> str:
    lines = ["## Release gates", ""]
    if report is None:
        lines.append("Not run yet.")
        return "\n".join(lines)
    lines += [
        f"Activation {code(report.activation_id)} ({report.status}, level {report.level}), "
        f"finished {when(report.finished_at)}.",
        "",
    ]
    if report.gates:
        lines += ["| gate | status | detail |", "|---|---|---|"]
        lines += [
            f"| {cell(str(gate.get('name', '')))} | {cell(str(gate.get('status', '')))} | "
            f"{cell(str(gate.get('detail', '')))} |"
            for gate in report.gates
        ]
    if report.detail:
        lines += ["", quoted(report.detail)]
    return "\n".join(lines)


def _activation(detail: ContractVersionDetail) -> str:
    lines = ["## Activation", ""]
    live = detail.went_live
    if live is None:
        lines.append("Never activated.")
    else:
        replaced = (
            f", replacing {code(live.replaced_version)}"
            if live.replaced_version
            else ", the class's first active version"
        )
        lines += [
            f"Activated by {live.requested_by_name} at {when(live.finished_at)} "
            f"(activation {code(live.activation_id)}){replaced}. Why:",
            "",
            quoted(live.rationale),
        ]
    retired = detail.retired_by
    if retired is not None:
        lines += [
            "",
            f"Retired at {when(retired.finished_at)}, when {retired.requested_by_name} "
            f"activated {code(retired.contract.version)} (activation "
            f"{code(retired.activation_id)}). Why:",
            "",
            quoted(retired.rationale),
        ]
    return "\n".join(lines)
