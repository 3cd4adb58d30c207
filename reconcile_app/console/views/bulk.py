"""Bulk triage in the console: preview a selection, confirm it, and watch its job run.

The list pages (Unknown outcomes, Contradictions) change nothing themselves: their selection
(ticked rows, or "all N matching these filters") opens a preview here (by GET, or posted when
the ticked rows' keys would not fit in a URL) — the count, a sample
and the action — where the operator gives a reason and, above CONFIRM_ABOVE rows, types the
count. The confirmation carries the preview's fingerprint of its rows: if the rows changed
meanwhile (one left the queue, another joined), it is refused and the new preview shown.
Confirming creates one job (services/bulk_jobs.py) and opens its page, which re-reads
its progress every POLL_SECONDS until the job is done.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

import django_tables2 as tables
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.views import View
from django_filters import FilterSet

from reconcile_app.choices import BulkJobAction, BulkJobKind
from reconcile_app.console.filtersets import (
    ConsoleContradictionFilterSet,
    ConsoleEffectFilterSet,
)
from reconcile_app.console.mixins import (
    OperatorRequiredMixin,
)
from reconcile_app.console.tables.contradictions import ContradictionTable
from reconcile_app.console.tables.effects import EffectTable
from reconcile_app.errors import DomainError, ValidationFailed
from reconcile_app.instants import instant_from_text
from reconcile_app.request_id import request_id_of
from reconcile_app.selectors.bulk import (
    CONTRADICTION_FILTERS,
    EFFECT_FILTERS,
    SAMPLE_SIZE,
    Selection,
    contradiction_batch_end,
    effect_batch_end,
)
from reconcile_app.services.bulk_jobs import (
    bulk_job_create,
    bulk_request_check,
    bulk_selection,
    selection_unchanged,
)

# Above this many rows the operator types the count to confirm.
CONFIRM_ABOVE = 10
# The instant a filter's preview was drawn, carried to its confirmation.
PREVIEWED_AT = "previewed_at"
# How many rows matched when the preview took only the oldest MAX_ITEMS (shown, not read).
BATCH_OF = "batch_of"


@dataclass(frozen=True)
class Choice:
    """One console action: what the operator picks, and the job it becomes."""

    label: str
    action: str
    outcome: str = ""
    hint: str = ""


EFFECT_CHOICES = {
    "readback": Choice(
        "Re-check now",
        BulkJobAction.READBACK,
        hint="Ask each owner: an unknown outcome is resolved from the owner's ledger and "
        "target, an accepted one read back. Nothing is re-sent.",
    ),
    "not_executed": Choice(
        "Resolve as not executed",
        BulkJobAction.RESOLVE,
        "not_executed",
        hint="Record your word that the owner never executed these commands.",
    ),
    "succeeded": Choice(
        "Resolve as succeeded",
        BulkJobAction.RESOLVE,
        "succeeded",
        hint="Record your word that they happened: each becomes accepted and still waits "
        "for a readback to verify it.",
    ),
}
CONTRADICTION_CHOICES = {
    "resolve": Choice(
        "Resolve",
        BulkJobAction.RESOLVE,
        hint="Close each open contradiction with your reason as its note; both values stay.",
    ),
}


def sample_table(kind: str, rows: list[Any]) -> tables.Table:
    """The preview's sample: the list's own table, without picks, sorting or pages."""
    if kind == BulkJobKind.CONTRADICTIONS:
        return ContradictionTable(
            rows, orderable=False, exclude=("pick", "resolution"), attrs={"id": "sample"}
        )
    return EffectTable(rows, orderable=False, attrs={"id": "sample", "class": "data-table"})


def bulk_filters(form: Any, names: tuple[str, ...]) -> list[tuple[str, str]]:
    """A list's filters as the preview takes them ("all N matching these filters")."""
    data = form.data
    if not hasattr(data, "getlist"):
        return []
    return [(name, value) for name in names for value in data.getlist(name) if value]


# Marks a preview the list's bar posted (its selection too long for a URL), not a confirmation.
PREVIEW_POSTED = "preview"


class BulkPreviewView(OperatorRequiredMixin, View):
    """GET: the preview of a selection. POST: confirm it and start the job."""

    kind: str = BulkJobKind.EFFECTS
    choices: dict[str, Choice] = EFFECT_CHOICES
    filters: tuple[str, ...] = EFFECT_FILTERS
    # "All N matching" means the rows the list showed: its filters read as the list reads them.
    filterset_class: type[FilterSet] = ConsoleEffectFilterSet
    ref_param = "key"
    list_url_name = "console-effects"
    noun = "effect"
    template_name = "reconcile_app/bulk_preview.html"
    # "All N matching" is pinned to the rows committed before the preview was drawn (unless
    # the list already bounds them): in an outage new ones arrive every few seconds, and a
    # confirmation refused for each newcomer would never start.
    pinned_by: str = "created_before"
    # Where the oldest MAX_ITEMS of a deeper selection end, in `pinned_by`'s terms.
    batch_end = staticmethod(effect_batch_end)
    pinned_as = "committed"

    def get(self, request: HttpRequest) -> HttpResponse:
        return self.preview(request, request.GET)

    def post(self, request: HttpRequest) -> HttpResponse:
        data = request.POST
        if data.get(PREVIEW_POSTED) and not data.get("fingerprint"):
            # The list's bar posts its ticked rows when they would not fit in a URL (bulk.js):
            # a hundred client-made keys run past the server's request-line limit (414).
            return self.preview(request, data)
        try:
            choice = self.choice(data)
            selection = self.select(data, choice)
            if not data.get("fingerprint"):
                raise ValidationFailed(
                    "confirm from the preview: it names the rows you act on",
                    code="preview_required",
                )
            # Before the typed count: when rows changed, that is what the operator must hear.
            selection_unchanged(selection, data["fingerprint"])
            self.confirmed(data, selection)
            job = bulk_job_create(
                kind=self.kind,
                actor=request.user,
                action=choice.action,
                outcome=choice.outcome or None,
                reason=data.get("reason", ""),
                request_id=request_id_of(request),
                # Checked again where the items are fixed: rows may change in between.
                fingerprint=selection.fingerprint,
                **self.asked(data),
            )
        except DomainError as error:
            return self.preview(request, data, error=error)
        return redirect("console-job", job_id=job.job_id)

    def choice(self, data: QueryDict) -> Choice:
        picked = data.get("do", "")
        if picked not in self.choices:
            raise DomainError(f"pick an action: {', '.join(self.choices)}", code="invalid_action")
        return self.choices[picked]

    def asked(self, data: QueryDict) -> dict[str, Any]:
        """The selection as the service takes it: the ticked rows, or the list's filters
        (with the preview's pin)."""
        if data.get("scope") == "filter":
            filters = {name: data.getlist(name) for name in self.filters if data.get(name)}
            pin = _instant(data.get(PREVIEWED_AT)) if self.pinned_by else None
            if pin is not None:
                # The earlier of the list's own bound and the preview's instant.
                given = _instant(data.get(self.pinned_by))
                filters[self.pinned_by] = [min(pin, given or pin).isoformat()]
            return {"filters": filters, "filterset_class": self.filterset_class}
        return {"keys": data.getlist(self.ref_param)}

    def select(self, data: QueryDict, choice: Choice) -> Selection:
        bulk_request_check(
            kind=self.kind, action=choice.action, outcome=choice.outcome or None, reason="-"
        )
        return bulk_selection(kind=self.kind, action=choice.action, **self.asked(data))

    def confirmed(self, data: QueryDict, selection: Selection) -> None:
        if selection.count > CONFIRM_ABOVE and data.get("confirm", "").strip() != str(
            selection.count
        ):
            raise DomainError(
                f"This acts on {selection.count} rows: type {selection.count} to confirm.",
                code="confirmation_mismatch",
            )

    def preview(
        self, request: HttpRequest, data: QueryDict, *, error: DomainError | None = None
    ) -> HttpResponse:
        selection: Selection | None = None
        choice: Choice | None = None
        if (
            self.pinned_by
            and data.get("scope") == "filter"
            and not _instant(data.get(PREVIEWED_AT))
        ):
            data = data.copy()
            data[PREVIEWED_AT] = timezone.now().isoformat()
        try:
            choice = self.choice(data)
            try:
                selection = self.select(data, choice)
            except ValidationFailed as refused:
                data = self.oldest_batch(data, choice, refused)
                selection = self.select(data, choice)
        except DomainError as refused:
            error = error or refused
        hidden = [
            (name, value)
            for name in ("do", "scope", self.ref_param, *self.filters, PREVIEWED_AT, BATCH_OF)
            for value in data.getlist(name)
            if value
        ]
        back = {name: value for name, value in hidden if name in self.filters}
        # The list's "All" tab sends no status (its filters drop it): back to that tab, not
        # to the list's default one.
        back.setdefault("status", "all")
        context = {
            "kind": self.kind,
            "noun": self.noun,
            "choice": choice,
            "choices": self.choices,
            "selection": selection,
            "sample_table": sample_table(self.kind, selection.sample) if selection else None,
            "sample_size": SAMPLE_SIZE,
            "confirm_above": CONFIRM_ABOVE,
            "needs_confirm": selection is not None and selection.count > CONFIRM_ABOVE,
            "scope": data.get("scope", "selected"),
            "hidden": hidden,
            "reason": data.get("reason", ""),
            "previewed_at": _instant(data.get(PREVIEWED_AT))
            if data.get("scope") == "filter"
            else None,
            "batch_of": data.get(BATCH_OF, ""),
            "pinned_as": self.pinned_as,
            "error": error,
            "back_url": f"{reverse(self.list_url_name)}?{urlencode(back)}",
        }
        return TemplateResponse(
            request, self.template_name, context, status=error.status if error else 200
        )

    def oldest_batch(self, data: QueryDict, choice: Choice, refused: ValidationFailed) -> QueryDict:
        """More rows match a list's filters than one job takes: the oldest of them, pinned
        (as the preview's instant is) to before the first row left out. In an outage the
        queue is thousands deep; "all N matching" then works through it a job at a time,
        where refusing it left the operator to split the list by hand."""
        if refused.code != "selection_too_large" or not (
            self.pinned_by and data.get("scope") == "filter"
        ):
            raise refused
        end = self.batch_end(action=choice.action, **self.asked(data))
        if end is None:
            raise refused
        data = data.copy()
        data[PREVIEWED_AT] = end.isoformat()
        data[BATCH_OF] = str(refused.extra.get("count", ""))
        return data


def _instant(text: str | None) -> datetime | None:
    """A posted instant, or None when absent or not one (a field the form wrote, but a
    browser may send anything)."""
    try:
        return instant_from_text(text, PREVIEWED_AT)
    except DomainError:
        return None


class ContradictionBulkPreviewView(BulkPreviewView):
    kind = BulkJobKind.CONTRADICTIONS
    pinned_by = "detected_before"
    batch_end = staticmethod(contradiction_batch_end)
    pinned_as = "detected"
    choices = CONTRADICTION_CHOICES
    filters = CONTRADICTION_FILTERS
    filterset_class = ConsoleContradictionFilterSet
    ref_param = "id"
    list_url_name = "console-contradictions"
    noun = "contradiction"
