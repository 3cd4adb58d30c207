"""The facts list's table: each key's selection by rule, and the authority it asked."""

from __future__ import annotations

from typing import Any

import django_tables2 as tables
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from reconcile_app.console.tables.common import TABLE_TEMPLATE, StableOrderTable
from reconcile_app.selectors.facts import FactSelection
from reconcile_app.sources import AuthorityResult
from reconcile_app.templatetags.reconcile_tags import (
    EMPTY,
    badge,
    jsonvalue,
)


class FactTable(StableOrderTable):
    """One row per fact key. The view fills `selections` for the rows of the page shown."""

    tie_breaker = "fact_key"  # rows are aggregates by key: no id

    fact_key = tables.Column(verbose_name="Fact key")
    code = tables.Column(empty_values=(), orderable=False, verbose_name="Current")
    value = tables.Column(empty_values=(), orderable=False, verbose_name="Selected value")
    provenance = tables.Column(empty_values=(), orderable=False, verbose_name="Owner @ revision")
    authority = tables.Column(empty_values=(), orderable=False, verbose_name="Owner's authority")
    records = tables.Column(verbose_name="Records", attrs={"td": {"class": "num"}})
    escalation = tables.Column(empty_values=(), orderable=False, verbose_name="Escalation")

    class Meta:
        template_name = TABLE_TEMPLATE
        attrs = {"class": "data-table", "id": "facts"}
        row_attrs = {"data-fact-key": lambda record: record["fact_key"]}
        empty_text = "No memory record carries a fact key yet."

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.selections: dict[str, FactSelection] = {}

    def _of(self, record: dict[str, Any]) -> FactSelection | None:
        return self.selections.get(record["fact_key"])

    def render_fact_key(self, value: str) -> SafeString:
        return format_html(
            '<a class="mono" href="{}">{}</a>', reverse("console-fact", args=[value]), value
        )

    def render_code(self, record: dict[str, Any]) -> SafeString:
        found = self._of(record)
        return badge(found.code) if found else EMPTY

    def render_value(self, record: dict[str, Any]) -> SafeString:
        found = self._of(record)
        if found is None or found.selection.fact is None:
            return EMPTY
        return format_html(
            '<span class="value mono">{}</span>', jsonvalue(found.selection.fact.value)
        )

    def render_provenance(self, record: dict[str, Any]) -> SafeString:
        found = self._of(record)
        if found is None or found.selection.fact is None:
            return EMPTY
        fact = found.selection.fact
        return format_html(
            '{}<span class="muted">@</span><span class="mono">{}</span>'
            ' <a class="mono muted" href="{}#{}">{}</a>',
            fact.owner,
            fact.source_revision,
            reverse("console-fact", args=[record["fact_key"]]),
            f"memory-{fact.memory_id}",
            fact.memory_id,
        )

    def render_authority(self, record: dict[str, Any]) -> SafeString:
        found = self._of(record)
        return authority_text(found) if found else EMPTY

    def render_records(self, record: dict[str, Any]) -> SafeString:
        return format_html(
            '<span title="current of all records">{} <span class="muted">/ {}</span></span>',
            record["current"],
            record["records"],
        )

    def render_escalation(self, record: dict[str, Any]) -> SafeString:
        found = self._of(record)
        if found is None or not found.open_escalation:
            return EMPTY
        return format_html(
            '<a class="mono" href="{}">{}</a> {}',
            reverse("console-escalation", args=[found.open_escalation]),
            found.open_escalation,
            badge("frozen", title="writes to this key wait for the escalation"),
        )


def _authority_state(authority: AuthorityResult | None) -> str:
    if authority is None:
        return "unavailable"
    # The owner answered: it registers nobody for the key (not an outage).
    return "none registered" if authority.none_registered else authority.status


def authority_text(found: FactSelection) -> SafeString:
    """The owner's answer: owner@revision from its source, or why it could not be asked."""
    authority = found.authority
    if found.authority_source is None:
        return mark_safe('<span class="muted">no source answers for this key</span>')  # nosec B308
    if authority is None or authority.status != "ok":
        return format_html(
            '{} <span class="muted">{}</span>',
            badge(
                _authority_state(authority),
                title=authority.detail if authority else "",
            ),
            found.authority_source,
        )
    return format_html(
        '{}<span class="muted">@</span><span class="mono">{}</span>'
        ' <span class="muted">from {}</span>',
        authority.owner,
        authority.source_revision,
        found.authority_source,
    )
