"""The diff page's rows: each field, rule, action and setting of two versions side by side,
with what differs marked (`<mark>`) and the row classed added, removed, changed or same.

Everything a contract file said is text someone wrote, so every cell is built with
format_html: escaped, never marked safe as it comes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from reconcile_app.selectors.contract_diff import ContractDiff, PartChange, SettingChange
from reconcile_app.templatetags.reconcile_tags import EMPTY, jsonvalue


@dataclass(frozen=True)
class DiffRow:
    key: str
    status: str
    before: SafeString
    after: SafeString


def _values(values: Any) -> str:
    if values is None:
        return "any value the policy allows"
    return ", ".join(jsonvalue(value) for value in values)


FIELD_PARTS = (
    ("required", lambda value: "required" if value else "optional"),
    ("source", lambda value: f"from {value}"),
    ("max_age_seconds", lambda value: f"max age {value} s"),
    ("evidence", lambda value: f"evidence {value}"),
)
RULE_PARTS = (
    ("expression", lambda value: f"when {value}"),
    ("code", lambda value: f"code {value}" if value else ""),
    ("permits", lambda value: f"permits {', '.join(value)}" if value else ""),
    ("position", lambda value: f"{value}. of its kind"),
)
ACTION_PARTS = (
    ("field", lambda value: f"writes {value}"),
    ("values", lambda value: f"values: {_values(value)}"),
)


def _side(side: dict[str, Any] | None, changed: list[str], parts: tuple[Any, ...]) -> SafeString:
    if side is None:
        return EMPTY
    shown = []
    for name, describe in parts:
        text = describe(side.get(name))
        if not text:
            continue
        template = '<mark class="differs">{}</mark>' if name in changed else "<span>{}</span>"
        shown.append(format_html(template, text))
    return format_html_join(" · ", "{}", ((item,) for item in shown))


def _rows(changes: list[PartChange], parts: tuple[Any, ...]) -> list[DiffRow]:
    return [
        DiffRow(
            key=change.key,
            status=change.status,
            before=_side(change.before, change.changed, parts),
            after=_side(change.after, change.changed, parts),
        )
        for change in changes
    ]


def _setting(value: Any) -> SafeString:
    if value is None or value == "":
        return EMPTY
    return format_html('<span class="mono">{}</span>', jsonvalue(value))


def _setting_rows(settings: list[SettingChange]) -> list[DiffRow]:
    return [
        DiffRow(
            key=setting.name,
            status=setting.status,
            before=_setting(setting.before),
            after=format_html(
                '<mark class="differs">{}</mark>' if setting.status != "same" else "{}",
                _setting(setting.after),
            ),
        )
        for setting in settings
    ]


def diff_sections(diff: ContractDiff) -> list[tuple[str, str, list[DiffRow]]]:
    """(id, title, rows) for each part of the contract, in the page's order."""
    return [
        ("settings", "Settings", _setting_rows(diff.settings)),
        ("fields", "Fields", _rows(diff.fields, FIELD_PARTS)),
        ("rules", "Policy rules", _rows(diff.rules, RULE_PARTS)),
        ("actions", "Actions", _rows(diff.actions, ACTION_PARTS)),
    ]
