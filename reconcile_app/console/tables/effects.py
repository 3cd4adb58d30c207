"""The effects queue's table."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import django_tables2 as tables
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from reconcile_app.console.tables.bulk import pick_box, pick_column
from reconcile_app.console.tables.common import TABLE_TEMPLATE, StableOrderTable, snapshot_link
from reconcile_app.models import Effect
from reconcile_app.templatetags.reconcile_tags import (
    age,
    attempts,
    badge,
    ts,
)


class EffectTable(StableOrderTable):
    """Effects by status; the unknown ones are the operators' triage queue."""

    pick = pick_column()
    idempotency_key = tables.Column(verbose_name="Key")
    action = tables.Column()
    subject = tables.Column(attrs={"td": {"class": "nowrap"}})
    source = tables.Column(accessor="source__name", verbose_name="Source")
    status = tables.Column()
    age = tables.Column(
        accessor="created_at",
        verbose_name="Age",
        order_by=("-created_at",),
        attrs={"td": {"class": "nowrap num"}},
    )
    attempts = tables.Column(empty_values=(), orderable=False, verbose_name="Attempts")
    next_check_at = tables.Column(verbose_name="Next check (UTC)")
    snapshot = tables.Column(orderable=False, verbose_name="Snapshot")

    class Meta:
        model = Effect
        fields = ()
        sequence = (
            "pick",
            "idempotency_key",
            "action",
            "subject",
            "source",
            "status",
            "age",
            "attempts",
            "next_check_at",
            "snapshot",
        )
        template_name = TABLE_TEMPLATE
        attrs = {"class": "data-table", "id": "effects"}
        row_attrs = {"id": lambda record: f"effect-{record.pk}"}
        empty_text = "No effect matches these filters."

    def __init__(self, *args: Any, can_pick: bool = False, **kwargs: Any) -> None:
        if not can_pick:
            # Rows are picked for bulk triage by operators, on the tabs it applies to.
            kwargs["exclude"] = (*kwargs.get("exclude", ()), "pick")
        super().__init__(*args, **kwargs)

    def render_pick(self, record: Effect) -> SafeString:
        return pick_box("key", record.idempotency_key, record.idempotency_key)

    def render_idempotency_key(self, value: str) -> SafeString:
        return format_html(
            '<a class="mono" href="{}">{}</a>', reverse("console-effect", args=[value]), value
        )

    def render_action(self, value: str) -> SafeString:
        return format_html('<span class="mono">{}</span>', value)

    def render_status(self, record: Effect) -> SafeString:
        return badge(record.status)

    def render_age(self, record: Effect) -> SafeString:
        return age(record.created_at)

    def render_attempts(self, record: Effect) -> SafeString:
        return attempts(record)

    def render_next_check_at(self, value: datetime | None) -> SafeString:
        return ts(value)

    def render_snapshot(self, record: Effect) -> SafeString:
        return snapshot_link(record.snapshot.snapshot_id)
