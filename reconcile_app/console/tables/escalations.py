"""The escalation queue's table."""

from __future__ import annotations

import django_tables2 as tables
from django.db.models import DurationField, ExpressionWrapper, F, QuerySet
from django.db.models.functions import Coalesce, Now
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from reconcile_app.choices import EscalationStatus
from reconcile_app.console.tables.common import TABLE_TEMPLATE, StableOrderTable
from reconcile_app.models import Escalation
from reconcile_app.selectors.effects import FINAL
from reconcile_app.selectors.escalation_commit_blocks import CommitBlock
from reconcile_app.templatetags.reconcile_tags import (
    age,
    badge,
    escalation_subject,
    ts,
)


class EscalationTable(StableOrderTable):
    """The reviewers' queue. Rows arrive in queue order (the view orders them by tab)."""

    age = tables.Column(
        accessor="opened_at",
        verbose_name="Age",
        attrs={"td": {"class": "nowrap num"}},
    )
    escalation_id = tables.Column(verbose_name="Escalation")
    code = tables.Column()
    about = tables.Column(empty_values=(), orderable=False, verbose_name="About")
    owner = tables.Column(attrs={"td": {"class": "nowrap"}})
    next_action = tables.Column(orderable=False, verbose_name="Next action")
    requested_by = tables.Column(
        accessor="requested_by__name", verbose_name="Raised by", order_by=("requested_by__name",)
    )
    status = tables.Column()
    decision = tables.Column(empty_values=(), orderable=False, verbose_name="Decision")

    class Meta:
        model = Escalation
        fields = ()
        sequence = (
            "age",
            "escalation_id",
            "code",
            "about",
            "owner",
            "next_action",
            "requested_by",
            "status",
            "decision",
        )
        template_name = TABLE_TEMPLATE
        attrs = {"class": "data-table", "id": "escalations"}
        row_attrs = {"id": lambda record: f"escalation-{record.escalation_id}"}
        empty_text = "No escalation matches these filters."

    # Set by the view for the page's rows (selectors/escalation_commit_blocks.py).
    commit_blocks: dict[int, CommitBlock] = {}

    def render_next_action(self, record: Escalation, value: str) -> SafeString:
        effect = record.effect
        if record.status == EscalationStatus.OPEN and effect is not None and effect.status in FINAL:
            # Its status has no "answered": the row says the question settled itself.
            return format_html(
                '<span class="badge badge-green">settled</span> the effect is {} since: '
                "nothing left for its owner to confirm",
                effect.status,
            )
        block = self.commit_blocks.get(record.pk)
        if block is None:
            return format_html("{}", value)
        # Approving (or committing on an approval) would change nothing: the gate refuses.
        return format_html(
            '<span class="badge badge-red">cannot commit</span> {} (<span class="mono">{}</span>)',
            block.detail,
            block.code,
        )

    def render_age(self, record: Escalation) -> SafeString:
        # An open escalation ages until decided; a decided one shows how long it waited.
        return age(record.opened_at, record.decided_at)

    def order_age(self, queryset: QuerySet, is_descending: bool) -> tuple[QuerySet, bool]:
        """By the age shown: the opening time alone orders a decided escalation by when it
        was asked, not by how long it waited for its answer."""
        waited = ExpressionWrapper(
            Coalesce(F("decided_at"), Now()) - F("opened_at"), output_field=DurationField()
        )
        ordered = queryset.annotate(waited=waited).order_by(f"{'-' if is_descending else ''}waited")
        return ordered, True

    def render_escalation_id(self, value: str) -> SafeString:
        return format_html(
            '<a class="mono" href="{}">{}</a>', reverse("console-escalation", args=[value]), value
        )

    def render_code(self, value: str) -> SafeString:
        return format_html('<span class="tag mono">{}</span>', value)

    def render_about(self, record: Escalation) -> SafeString:
        return escalation_subject(record)

    def render_status(self, record: Escalation) -> SafeString:
        return badge(record.status)

    def render_decision(self, record: Escalation) -> SafeString:
        if record.status == EscalationStatus.OPEN:
            return mark_safe('<span class="muted">awaiting a reviewer</span>')  # nosec B308
        return format_html(
            '<span class="nowrap">{}</span> <span class="muted">· {}</span>',
            record.decided_by.get_username() if record.decided_by else "—",
            ts(record.decided_at),
        )
