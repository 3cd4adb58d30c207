"""Tables of the quarantine page: the state of every source and memory class (and of the memory
records under quarantine), and history.

Cells render from the row itself (the quarantine and who created or lifted it are joined in
the page's query): no per-row query.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import django_tables2 as tables
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from reconcile_app.choices import QuarantineScope, QuarantineStatus
from reconcile_app.console.mixins import MAX_POLLS, POLL_SECONDS
from reconcile_app.console.node_links import node_blast_radius_url
from reconcile_app.console.quarantine_links import affected_url
from reconcile_app.console.tables.common import TABLE_TEMPLATE, StableOrderTable, unseen_header
from reconcile_app.models import Quarantine
from reconcile_app.selectors.quarantine import QuarantineTarget
from reconcile_app.templatetags.reconcile_tags import EMPTY, badge, ts

DIALOG_BODY = "#ops-dialog-body"


AFFECTED_LABELS = {
    "snapshots": "snapshots",
    "decisions": "allowed decisions",
    "effects_pending": "pending effects",
    "effects": "effects",
    "memories": "memories",
    "memories_current": "current memories",
    "claims": "claims that cited it",
}


def affected_label(name: str) -> str:
    if name in AFFECTED_LABELS:
        return AFFECTED_LABELS[name]
    if name.startswith("downstream_"):
        return f"downstream {name.removeprefix('downstream_').replace('_', ' ')}s"
    return name.replace("_", " ")


def affected_counts(affected: dict[str, int] | None, quarantine: Quarantine) -> SafeString:
    """`3 snapshots · 1 allowed decision …` as the task counted them, each count a link to
    the list it counts (console/quarantine_links.py) where a page lists exactly those."""
    if not affected:
        return format_html('<span class="muted">{}</span>', "nothing")
    pairs = []
    for name, count in affected.items():
        url = affected_url(
            scope=quarantine.scope, target=quarantine.target, name=name, since=quarantine.since
        )
        label = affected_label(name)
        if url and count:
            pairs.append(
                format_html(
                    '<a class="pair affected" data-count="{}" href="{}"><strong>{}</strong> {}</a>',
                    name,
                    url,
                    count,
                    label,
                )
            )
        else:
            pairs.append(
                format_html(
                    '<span class="pair affected" data-count="{}"><strong>{}</strong> {}</span>',
                    name,
                    count,
                    label,
                )
            )
    return format_html_join(" ", "{}", ((pair,) for pair in pairs))


def dialog_link(url: str, label: str, *, css: str = "btn btn-small") -> SafeString:
    """A link to the dialog's own page (works without JavaScript) that htmx loads into the
    page's dialog instead."""
    return format_html(
        '<a class="{}" href="{}" hx-get="{}" hx-target="{}" hx-swap="innerHTML"'
        ' hx-push-url="false" data-opens-dialog>{}</a>',
        css,
        url,
        url,
        DIALOG_BODY,
        label,
    )


def _polling(record: QuarantineTarget, table: QuarantineTargetTable) -> bool:
    return record.applying and table.polls < MAX_POLLS


def _poll_url(record: QuarantineTarget, table: QuarantineTargetTable) -> str | None:
    if not _polling(record, table):
        return None
    query = urlencode({"polls": table.polls + 1, "since": record.state})
    return f"{target_url(record)}?{query}"


def recheck_unknown_link(record: QuarantineTarget) -> SafeString:
    """After an outage: every unknown outcome against this source, through the bulk preview.

    Held while the source is quarantined (a re-check against it would be held too, each item
    failing "quarantined"), and idle when nothing against it is unknown: a disabled button
    that says why, rather than a link that leads to an empty or futile job."""
    count = record.unknown
    label = f"Re-check {count} unknown…"
    if record.active:
        why = f"{record.target} is quarantined: re-checks against it are held until it is lifted"
    elif not count:
        label, why = "Re-check unknown…", "no effect against this source has an unknown outcome"
    else:
        query = urlencode(
            {"do": "readback", "scope": "filter", "status": "unknown", "source": record.target}
        )
        return format_html(
            '<a class="btn btn-small recheck-source" href="{}?{}" data-unknown="{}">{}</a>',
            reverse("console-effects-bulk"),
            query,
            count,
            label,
        )
    return format_html(
        '<button type="button" class="btn btn-small recheck-source" disabled'
        ' data-unknown="{}" title="{}">{}</button><div class="cell-note recheck-held">{}</div>',
        count,
        why,
        label,
        f"{count} unknown; {why}" if record.active and count else why,
    )


def target_url(record: QuarantineTarget) -> str:
    return reverse("console-quarantine-target", args=[record.scope, record.target])


class QuarantineTargetTable(tables.Table):
    """One row per source and memory class, and per memory record under quarantine. A row
    being applied re-reads itself every
    POLL_SECONDS until the task has listed what it affects."""

    scope = tables.Column(empty_values=(), verbose_name="Scope")
    target = tables.Column(empty_values=(), verbose_name="Target")
    state = tables.Column(empty_values=(), verbose_name="State")
    quarantined_by = tables.Column(empty_values=(), verbose_name="Quarantined by")
    reason = tables.Column(empty_values=(), verbose_name="Reason")
    since = tables.Column(empty_values=(), verbose_name="Since (UTC)")
    ends_at = tables.Column(empty_values=(), verbose_name="Ends (UTC)")
    affected = tables.Column(empty_values=(), verbose_name="Affected")
    actions = tables.Column(
        empty_values=(), verbose_name=unseen_header("Actions"), attrs={"td": {"class": "nowrap"}}
    )

    class Meta:
        template_name = TABLE_TEMPLATE
        orderable = False
        attrs = {"class": "data-table", "id": "quarantine-targets"}
        row_attrs = {
            "id": lambda record: record.dom_id,
            "data-scope": lambda record: record.scope,
            "data-target": lambda record: record.target,
            "data-state": lambda record: record.state,
            "data-polling": lambda record, table: "true" if _polling(record, table) else "false",
            "hx-get": _poll_url,
            "hx-trigger": lambda record, table: (
                f"every {POLL_SECONDS}s" if _polling(record, table) else None
            ),
            "hx-target": lambda record, table: "this" if _polling(record, table) else None,
            "hx-swap": lambda record, table: "outerHTML" if _polling(record, table) else None,
        }
        empty_text = "No source is loaded and no memory class is known yet."

    def __init__(self, *args: Any, can_operate: bool = False, polls: int = 0, **kwargs: Any):
        if not can_operate:
            # Non-operators see the state only: no column of buttons they could not use.
            kwargs["exclude"] = ("actions",)
        super().__init__(*args, **kwargs)
        self.can_operate = can_operate
        self.polls = polls

    def render_scope(self, record: QuarantineTarget) -> SafeString:
        return format_html('<span class="tag">{}</span>', record.scope.replace("_", " "))

    def render_target(self, record: QuarantineTarget) -> SafeString:
        if record.scope == QuarantineScope.MEMORY:
            # A record is known by what it fed: its name opens its blast radius.
            return format_html(
                '<a class="mono" href="{}"><strong>{}</strong></a><div class="cell-note">{}</div>',
                node_blast_radius_url(f"memory:{record.target}"),
                record.target,
                record.note,
            )
        if record.note:
            return format_html(
                '<strong class="mono">{}</strong><div class="cell-note">{}</div>',
                record.target,
                record.note,
            )
        return format_html('<strong class="mono">{}</strong>', record.target)

    def render_state(self, record: QuarantineTarget) -> SafeString:
        return badge(record.state)

    def render_quarantined_by(self, record: QuarantineTarget) -> SafeString:
        quarantine = record.quarantine
        if quarantine is None:
            return EMPTY
        who = quarantine.created_by.get_username() if quarantine.created_by else "system"
        return format_html('<span class="nowrap">{}</span>', who)

    def render_reason(self, record: QuarantineTarget) -> SafeString:
        if record.quarantine is None:
            return EMPTY
        return format_html('<span class="reason-text">{}</span>', record.quarantine.reason)

    def render_since(self, record: QuarantineTarget) -> SafeString:
        return ts(record.quarantine.created_at) if record.quarantine else EMPTY

    def render_ends_at(self, record: QuarantineTarget) -> SafeString:
        if record.quarantine is None:
            return EMPTY
        if record.quarantine.ends_at is None:
            return format_html('<span class="muted">{}</span>', "until lifted")
        return ts(record.quarantine.ends_at)

    def render_affected(self, record: QuarantineTarget) -> SafeString:
        quarantine = record.quarantine
        if quarantine is None:
            return EMPTY
        if record.applying:
            if _polling(record, self):
                return format_html(
                    '<span class="polling"><span class="spinner" aria-hidden="true"></span>'
                    "{}</span>",
                    "Applying: listing what it affects…",
                )
            return format_html(
                '<span class="muted">{}</span>',
                "Still applying; this row stopped refreshing. Reload to look again.",
            )
        return affected_counts(quarantine.affected, quarantine)

    def render_actions(self, record: QuarantineTarget) -> SafeString:
        if record.quarantine is not None:
            action = dialog_link(
                reverse("console-quarantine-lift", args=[record.quarantine.quarantine_id]),
                "Lift…",
                css="btn btn-small btn-danger",
            )
        else:
            query = urlencode({"scope": record.scope, "target": record.target})
            action = dialog_link(f"{reverse('console-quarantine-new')}?{query}", "Quarantine…")
        if record.scope != QuarantineScope.SOURCE:
            return action
        return format_html("{} {}", action, recheck_unknown_link(record))


class QuarantineHistoryTable(StableOrderTable):
    """Every quarantine, past and present; each row can unfold its audit timeline."""

    quarantine_id = tables.Column(verbose_name="Quarantine")
    scope = tables.Column()
    target = tables.Column()
    status = tables.Column()
    reason = tables.Column(orderable=False)
    created_by = tables.Column(
        accessor="created_by__username", verbose_name="By", order_by=("created_by__username",)
    )
    created_at = tables.Column(verbose_name="Created (UTC)")
    ends_at = tables.Column(verbose_name="Ends (UTC)")
    affected = tables.Column(empty_values=(), orderable=False, verbose_name="Affected")
    lifted = tables.Column(
        empty_values=(), verbose_name="Lifted", accessor="lifted_at", order_by=("lifted_at",)
    )

    class Meta:
        model = Quarantine
        fields = ()
        sequence = (
            "quarantine_id",
            "scope",
            "target",
            "status",
            "reason",
            "created_by",
            "created_at",
            "ends_at",
            "affected",
            "lifted",
        )
        template_name = TABLE_TEMPLATE
        attrs = {"class": "data-table", "id": "quarantine-history"}
        row_attrs = {"id": lambda record: f"quarantine-{record.quarantine_id}"}
        empty_text = "No quarantine matches these filters."

    def render_quarantine_id(self, value: str) -> SafeString:
        url = reverse("console-audit-timeline", args=["quarantine", value]) + "?compact=1"
        return format_html(
            '<details class="history"><summary class="mono" hx-get="{}" hx-trigger="click once"'
            ' hx-target="next .history-body" hx-swap="innerHTML" hx-push-url="false">{}</summary>'
            '<div class="history-body"><a href="{}?object_kind=quarantine&amp;object_ref={}">'
            "In the audit log</a></div></details>",
            url,
            value,
            reverse("console-audit"),
            value,
        )

    def render_scope(self, record: Quarantine) -> SafeString:
        return format_html('<span class="tag">{}</span>', record.scope.replace("_", " "))

    def render_target(self, value: str) -> SafeString:
        return format_html('<span class="mono">{}</span>', value)

    def render_status(self, record: Quarantine) -> SafeString:
        return badge(record.status)

    def render_created_at(self, value: Any) -> SafeString:
        return ts(value)

    def render_ends_at(self, value: Any) -> SafeString:
        return ts(value)

    def render_affected(self, record: Quarantine) -> SafeString:
        if record.status == QuarantineStatus.APPLYING:
            return format_html('<span class="muted">{}</span>', "being listed")
        return affected_counts(record.affected, record)

    def render_lifted(self, record: Quarantine) -> SafeString:
        if record.lifted_at is None:
            return EMPTY
        who = record.lifted_by.get_username() if record.lifted_by else "system"
        return format_html(
            '<div class="resolution"><span>{}</span><span class="muted">{} · {}</span></div>',
            record.lift_reason,
            who,
            ts(record.lifted_at),
        )
