"""Console pages for facts by rule: every fact key's current selection, and one key's history.

Reading these pages never opens an escalation (see selectors.facts): looking is not
asking on an agent's behalf.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.views.generic import TemplateView
from django_tables2 import SingleTableMixin

from reconcile_app.console.forms.facts import FactFilterForm
from reconcile_app.console.mixins import (
    PER_PAGE,
    HtmxPartialMixin,
    StaffRequiredMixin,
    not_found_is_404,
)
from reconcile_app.console.tables.facts import FactTable
from reconcile_app.selectors.audit import fact_timeline
from reconcile_app.selectors.fact_history import FactBelieved, fact_day
from reconcile_app.selectors.facts import (
    console_fact_detail,
    console_fact_keys,
    fact_selections,
)
from reconcile_app.services.facts import ESCALATING_CODES
from reconcile_app.services.memory import fact_today


def _cleaned(form: FactFilterForm, name: str) -> Any:
    """A field's clean value even when another field is invalid (that one is reported)."""
    form.is_valid()
    return getattr(form, "cleaned_data", {}).get(name)


def _on(form: FactFilterForm) -> date:
    """The date the rule is applied on: the form's, or today in the declared fact timezone."""
    return _cleaned(form, "on") or fact_today()


class FactListView(StaffRequiredMixin, HtmxPartialMixin, SingleTableMixin, TemplateView):
    table_class = FactTable
    table_pagination = {"per_page": PER_PAGE}
    template_name = "reconcile_app/fact_list.html"
    partial_template_name = "reconcile_app/partials/fact_table.html"

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        # Unfiltered, the date input shows the date the rule is applied on (today).
        self.form = FactFilterForm(request.GET or None, initial={"on": fact_today()})
        self.on = _on(self.form)
        return super().get(request, *args, **kwargs)

    def get_table_data(self) -> QuerySet:
        return console_fact_keys(search=_cleaned(self.form, "fact_key") or "")

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        table = context["table"]
        # Selections for the keys on this page only: the owner is asked once per key shown.
        keys = [row.record["fact_key"] for row in table.page.object_list] if table.page else []
        table.selections = fact_selections(fact_keys=keys, on=self.on)
        context.update({"form": self.form, "on": self.on, "today": fact_today()})
        return context


class FactDetailView(StaffRequiredMixin, HtmxPartialMixin, TemplateView):
    """One key: the selection on a date, today or as believed at a recorded time, and the
    key's whole history. The "believed at" picker only reads: it opens nothing, writes
    nothing, and an owner without authority history is said to be one."""

    template_name = "reconcile_app/fact_detail.html"
    partial_template_name = "reconcile_app/partials/fact_view.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        fact_key = kwargs["fact_key"]
        form = FactFilterForm(self.request.GET or None)
        on = _on(form)
        as_of = _cleaned(form, "as_of")
        if as_of is not None and not form["on"].value():
            # A question about then applies the rule on then's date unless told otherwise.
            on = fact_day(as_of)
        with not_found_is_404():
            detail = console_fact_detail(fact_key=fact_key, on=on, as_of=as_of)
        believed = detail.current if isinstance(detail.current, FactBelieved) else None
        context.update(
            {
                "detail": detail,
                "current": detail.current,
                "fact_key": fact_key,
                "form": form,
                "on": on,
                "as_of": as_of,
                "believed": believed,
                "statuses_then": believed.statuses if believed is not None else {},
                # Today's answer needs a person, but only an agent's read opens the question.
                "needs_person": believed is None and detail.current.code in ESCALATING_CODES,
                "today": fact_today(),
            }
        )
        if not self.wants_partial():
            # The timeline sits outside the region the "believed at" picker swaps.
            context["timeline"] = fact_timeline(fact_key=fact_key)
        return context
