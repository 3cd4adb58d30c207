"""The Contracts page's tables: one per decision class, a row per version.

Cells render from the rows the selector built (every version and its newest activation in two
queries for the whole page): no per-row query.
"""

from __future__ import annotations

from urllib.parse import urlencode

import django_tables2 as tables
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from reconcile_app.choices import ActivationStatus, ContractStatus
from reconcile_app.console.tables.common import TABLE_TEMPLATE, unseen_header
from reconcile_app.models import Contract
from reconcile_app.selectors.contract_versions import GATE_STATUSES, VersionRow
from reconcile_app.templatetags.reconcile_tags import EMPTY, badge, ts


def contract_url(contract: Contract) -> str:
    return reverse("console-contract", args=[contract.decision_class, contract.version])


def diff_url(decision_class: str, before: str, after: str) -> str:
    query = urlencode({"from": before, "to": after})
    return f"{reverse('console-contract-diff', args=[decision_class])}?{query}"


def gate_summary(counts: dict[str, int]) -> SafeString:
    """`5 passed · 1 failed · 1 not required`, zeros left out."""
    shown = [(status, counts[status]) for status in GATE_STATUSES if counts.get(status)]
    return format_html_join(
        " ",
        '<span class="pair nowrap" data-gate-status="{}">{} {}</span>',
        ((status, badge(status), count) for status, count in shown),
    )


class ContractVersionTable(tables.Table):
    """Not paginated: a class keeps a handful of versions, all shown at once."""

    version = tables.Column(empty_values=(), verbose_name="Version", orderable=False)
    status = tables.Column(empty_values=(), verbose_name="Status", orderable=False)
    level = tables.Column(accessor="contract__level", verbose_name="Level", orderable=False)
    gates = tables.Column(empty_values=(), verbose_name="Release gates", orderable=False)
    loaded = tables.Column(empty_values=(), verbose_name="Loaded (UTC)", orderable=False)
    activated = tables.Column(empty_values=(), verbose_name="Went live (UTC)", orderable=False)
    activation = tables.Column(empty_values=(), verbose_name="Latest activation", orderable=False)
    compare = tables.Column(empty_values=(), verbose_name=unseen_header("Compare"), orderable=False)

    class Meta:
        template_name = TABLE_TEMPLATE
        attrs = {"class": "data-table contract-versions"}
        row_attrs = {
            "id": lambda record: (
                f"version-{record.contract.decision_class}-{record.contract.version}"
            ),
            "data-version": lambda record: record.contract.version,
            "data-status": lambda record: record.contract.status,
        }
        empty_text = "No version is loaded."

    def __init__(self, rows: list[VersionRow], *, active: Contract | None, **kwargs: object):
        self.active = active
        super().__init__(rows, **kwargs)  # type: ignore[arg-type]

    def render_version(self, record: VersionRow) -> SafeString:
        return format_html(
            '<a class="mono" href="{}"><strong>{}</strong></a>',
            contract_url(record.contract),
            record.contract.version,
        )

    def render_status(self, record: VersionRow) -> SafeString:
        return badge(record.contract.status)

    def render_level(self, value: str) -> SafeString:
        return format_html('<span class="tag">{}</span>', value)

    def render_gates(self, record: VersionRow) -> SafeString:
        activation = record.latest_activation
        if activation is None:
            return mark_safe('<span class="muted">not run</span>')  # nosec B308
        if activation.status == ActivationStatus.RUNNING:
            return badge("running", label="running now")
        if not activation.gates:
            return badge(activation.status, title=activation.detail)
        return gate_summary(record.gate_counts)

    def render_loaded(self, record: VersionRow) -> SafeString:
        return ts(record.contract.loaded_at)

    def render_activated(self, record: VersionRow) -> SafeString:
        return ts(record.contract.activated_at) if record.contract.activated_at else EMPTY

    def render_activation(self, record: VersionRow) -> SafeString:
        activation = record.latest_activation
        if activation is None:
            return EMPTY
        return format_html(
            '{} <span class="muted">by</span> {} <span class="muted nowrap">{}</span>',
            badge(activation.status),
            activation.requested_by_name,
            ts(activation.requested_at),
        )

    def render_compare(self, record: VersionRow) -> SafeString:
        contract = record.contract
        if self.active is None or contract.status == ContractStatus.ACTIVE:
            return EMPTY
        return format_html(
            '<a class="nowrap" href="{}">diff against {}</a>',
            diff_url(contract.decision_class, self.active.version, contract.version),
            self.active.version,
        )
