"""django-tables2 tables of the console. Cells render from the row itself: no per-row query."""

# The mark_safe calls below wrap constant strings only (hence the B308 exemptions).

from __future__ import annotations

from datetime import datetime
from typing import Any

import django_tables2 as tables
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from reconcile_app.models import Contradiction, DecisionSnapshot, Effect, Escalation
from reconcile_app.selectors.facts import FactSelection
from reconcile_app.selectors.snapshot_detail import verdict_counts
from reconcile_app.templatetags.reconcile_tags import (
    EMPTY,
    age,
    attempts,
    badge,
    badge_colour,
    escalation_subject,
    jsonvalue,
    ts,
)

TABLE_TEMPLATE = "reconcile_app/tables/console_table.html"


class SnapshotTable(tables.Table):
    issued_at = tables.Column(verbose_name="Issued (UTC)")
    snapshot_id = tables.Column(verbose_name="Snapshot")
    decision_class = tables.Column(verbose_name="Decision class")
    subject = tables.Column(attrs={"td": {"class": "nowrap"}})
    principal = tables.Column(
        empty_values=(), orderable=False, accessor="content", verbose_name="Principal"
    )
    result = tables.Column()
    completeness = tables.Column()
    proposed_action = tables.Column(verbose_name="Proposed action")
    claims = tables.Column(
        empty_values=(), orderable=False, accessor="content", verbose_name="Claims"
    )

    class Meta:
        model = DecisionSnapshot
        fields = ()
        sequence = (
            "issued_at",
            "snapshot_id",
            "decision_class",
            "subject",
            "principal",
            "result",
            "completeness",
            "proposed_action",
            "claims",
        )
        template_name = TABLE_TEMPLATE
        attrs = {"class": "data-table", "id": "snapshots"}
        empty_text = "No snapshot matches these filters."
        order_by = ("-issued_at",)

    def render_issued_at(self, value: Any) -> SafeString:
        return ts(value)

    def render_snapshot_id(self, value: str) -> SafeString:
        return format_html(
            '<a class="mono" href="{}" title="{}">{}</a>',
            reverse("console-snapshot", args=[value]),
            value,
            value[:17] + "…" if len(value) > 18 else value,
        )

    def render_decision_class(self, value: str, record: DecisionSnapshot) -> SafeString:
        version = record.content.get("contract", {}).get("version", "")
        return format_html('{} <span class="version">v{}</span>', value, version)

    def render_principal(self, record: DecisionSnapshot) -> str:
        return str(record.content.get("binding", {}).get("principal", "—"))

    # Badges take the stored value, not the choice label tables2 would pass as `value`.
    def render_result(self, record: DecisionSnapshot) -> SafeString:
        return badge(record.result)

    def render_completeness(self, record: DecisionSnapshot) -> SafeString:
        return badge(record.completeness)

    def render_proposed_action(self, value: str) -> SafeString:
        return format_html('<span class="mono">{}</span>', value) if value else mark_safe("—")  # nosec B308

    def render_claims(self, record: DecisionSnapshot) -> SafeString:
        counts = verdict_counts(record.content)
        if not counts:
            return mark_safe('<span class="muted">none</span>')  # nosec B308
        return format_html_join(
            " ",
            '<span class="badge badge-{} badge-count" title="{}">{} {}</span>',
            (
                (badge_colour(verdict), verdict, count, verdict.replace("_", " "))
                for verdict, count in counts
            ),
        )


class ContradictionTable(tables.Table):
    """Both sides of each contradiction side by side; never merged into one value."""

    detected_at = tables.Column(verbose_name="Detected (UTC)")
    kind = tables.Column()
    subject = tables.Column(attrs={"td": {"class": "nowrap"}})
    field = tables.Column()
    state = tables.Column(empty_values=(), orderable=False, verbose_name="State (owner)")
    other = tables.Column(empty_values=(), orderable=False, verbose_name="Other side")
    snapshot = tables.Column(orderable=False, verbose_name="Snapshot")
    status = tables.Column()
    resolution = tables.TemplateColumn(
        template_name="reconcile_app/partials/contradiction_resolution.html",
        orderable=False,
        empty_values=(),
        verbose_name="Resolution",
        extra_context=lambda table, record: {
            "can_resolve": table.can_resolve,
            "error": table.errors.get(record.pk, ""),
            "draft": table.drafts.get(record.pk, ""),
        },
    )

    class Meta:
        model = Contradiction
        fields = ()
        sequence = (
            "detected_at",
            "kind",
            "subject",
            "field",
            "state",
            "other",
            "snapshot",
            "status",
            "resolution",
        )
        template_name = "reconcile_app/tables/contradiction_table.html"
        attrs = {"class": "data-table", "id": "contradictions"}
        row_attrs = {"id": lambda record: f"contradiction-{record.pk}"}
        empty_text = "No contradiction matches these filters."
        order_by = ("-detected_at",)

    def __init__(
        self,
        *args: Any,
        can_resolve: bool = False,
        errors: dict[int, str] | None = None,
        drafts: dict[int, str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        # Decided once per request by the view (operators only); the server checks it again.
        self.can_resolve = can_resolve
        # A refused resolve comes back with its message and the note as typed, in the row.
        self.errors = errors or {}
        self.drafts = drafts or {}

    def render_detected_at(self, value: Any) -> SafeString:
        return ts(value)

    def render_kind(self, record: Contradiction) -> SafeString:
        return format_html('<span class="tag">{}</span>', record.kind.replace("_", " "))

    def render_field(self, value: str) -> SafeString:
        return format_html('<span class="mono">{}</span>', value)

    def render_state(self, record: Contradiction) -> SafeString:
        return _side(record.state_value, record.state_source, record.state_ref)

    def render_other(self, record: Contradiction) -> SafeString:
        return _side(record.other_value, record.other_source, record.other_ref)

    def render_snapshot(self, record: Contradiction) -> SafeString:
        return snapshot_link(record.snapshot.snapshot_id)

    def render_status(self, record: Contradiction) -> SafeString:
        return badge(record.status)


def snapshot_link(snapshot_id: str) -> SafeString:
    return format_html(
        '<a class="mono" href="{}" title="{}">{}</a>',
        reverse("console-snapshot", args=[snapshot_id]),
        snapshot_id,
        snapshot_id[:17] + "…",
    )


def _side(value: Any, source: str, ref: str) -> SafeString:
    return format_html(
        '<div class="side"><span class="value">{}</span>'
        '<span class="side-source">{}</span><span class="side-ref mono">{}</span></div>',
        jsonvalue(value),
        source,
        ref,
    )


class EscalationTable(tables.Table):
    """The reviewers' queue. Rows arrive in queue order (the view orders them by tab)."""

    age = tables.Column(
        accessor="opened_at",
        verbose_name="Age",
        order_by=("-opened_at",),
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

    def render_age(self, record: Escalation) -> SafeString:
        # An open escalation ages until decided; a decided one shows how long it waited.
        return age(record.opened_at, record.decided_at)

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
        if record.status == Escalation.Status.OPEN:
            return mark_safe('<span class="muted">awaiting a reviewer</span>')  # nosec B308
        return format_html(
            '<span class="nowrap">{}</span> <span class="muted">· {}</span>',
            record.decided_by.get_username() if record.decided_by else "—",
            ts(record.decided_at),
        )


class EffectTable(tables.Table):
    """Effects by status; the unknown ones are the operators' triage queue."""

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


class FactTable(tables.Table):
    """One row per fact key. The view fills `selections` for the rows of the page shown."""

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


def authority_text(found: FactSelection) -> SafeString:
    """The owner's answer: owner@revision from its source, or why it could not be asked."""
    authority = found.authority
    if found.authority_source is None:
        return mark_safe('<span class="muted">no source answers for this key</span>')  # nosec B308
    if authority is None or authority.status != "ok":
        return format_html(
            '{} <span class="muted">{}</span>',
            badge(
                authority.status if authority else "unavailable",
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
