"""What the console's tables share: the table template and the cells several areas show."""

from __future__ import annotations

from typing import Any

import django_tables2 as tables
from django.core.paginator import Paginator
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django_tables2.data import TableQuerysetData

from reconcile_app.templatetags.reconcile_tags import (
    jsonvalue,
)

TABLE_TEMPLATE = "reconcile_app/tables/console_table.html"
# The most rows one page of a table shows, whatever `?per_page=` asks: django-tables2 takes
# the page size from the URL, and a page of every row (thousands in an incident) held a web
# worker past its timeout, while a size below one was a server error.
MAX_PER_PAGE = 100


def unseen_header(text: str) -> SafeString:
    """A header for a column of buttons or links: not shown (the cells say what they do), but
    read by a screen reader that names each cell by its column."""
    return format_html('<span class="visually-hidden">{}</span>', text)


def snapshot_link(snapshot_id: str) -> SafeString:
    return format_html(
        '<a class="mono" href="{}" title="{}">{}</a>',
        reverse("console-snapshot", args=[snapshot_id]),
        snapshot_id,
        snapshot_id[:17] + "…",
    )


def side_by_side(value: Any, source: str, ref: str) -> SafeString:
    return format_html(
        '<div class="side"><span class="value">{}</span>'
        '<span class="side-source">{}</span><span class="side-ref mono">{}</span></div>',
        jsonvalue(value),
        source,
        ref,
    )


class PagedTable(tables.Table):
    """A table whose page size, asked for in the URL, stays between one row and MAX_PER_PAGE
    (none, zero or less: the table's own size)."""

    def paginate(
        self,
        paginator_class: type[Paginator] = Paginator,
        per_page: int | None = None,
        page: int | str = 1,
        *args: Any,
        **kwargs: Any,
    ) -> PagedTable:
        asked = per_page if per_page is not None and per_page > 0 else self._meta.per_page
        super().paginate(paginator_class, min(asked, MAX_PER_PAGE), page, *args, **kwargs)
        return self


class StableOrderTable(PagedTable):
    """A table whose sorted rows keep ties in one order: the row's id, in the sort's direction.

    Sorting by a column with repeated values (a status, a source, a name) leaves the order of
    equal rows to the database, which may differ from one page's query to the next: a row
    then shows on two pages, or on none. The id after the column makes every page a slice of
    one order."""

    # A unique column of the rows (a table of aggregates has no id).
    tie_breaker = "pk"

    @property  # type: ignore[override]
    def order_by(self) -> Any:
        return tables.Table.order_by.fget(self)  # type: ignore[attr-defined]

    @order_by.setter
    def order_by(self, value: Any) -> None:
        tables.Table.order_by.fset(self, value)  # type: ignore[attr-defined]
        data = self.data
        if not isinstance(data, TableQuerysetData):
            return
        ordering = list(data.data.query.order_by)
        unique = {"pk", "id", self.tie_breaker}
        if not ordering or any(str(term).lstrip("-") in unique for term in ordering):
            return
        descending = str(ordering[0]).startswith("-")
        data.data = data.data.order_by(*ordering, f"{'-' if descending else ''}{self.tie_breaker}")
