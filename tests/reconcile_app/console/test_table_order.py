"""Sorting a paginated console table by a column keeps equal rows in one order (by id).

Without it, the database may order equal rows differently for page 1 and page 2, so a row
shows twice or not at all: an operator paging through 2,000 `unknown` effects sorted by
source would miss some. SQLite happens to return equal rows in a stable order, so paging
through a page boundary would pass either way: the query's ORDER BY is what is pinned."""

from __future__ import annotations

import pytest

from reconcile_app.console.tables.audit import AuditTable
from reconcile_app.console.tables.contradictions import ContradictionTable
from reconcile_app.console.tables.effects import EffectTable
from reconcile_app.console.tables.escalations import EscalationTable
from reconcile_app.console.tables.facts import FactTable
from reconcile_app.console.tables.promotions import PromotionTable
from reconcile_app.console.tables.quarantine import QuarantineHistoryTable
from reconcile_app.console.tables.snapshots import SnapshotTable
from reconcile_app.selectors.facts import console_fact_keys

PAGINATED_TABLES = [
    AuditTable,
    FactTable,
    ContradictionTable,
    EffectTable,
    EscalationTable,
    PromotionTable,
    QuarantineHistoryTable,
    SnapshotTable,
]


def _rows(table_class):
    if table_class is FactTable:
        return console_fact_keys()  # one aggregate row per key
    return table_class._meta.model.objects.all()


def _orderings(table_class):
    table = table_class(_rows(table_class))
    for column in table.columns:
        if column.orderable:
            yield column.name


@pytest.mark.django_db
@pytest.mark.parametrize("table_class", PAGINATED_TABLES, ids=lambda cls: cls.__name__)
def test_every_sortable_column_ends_in_the_row_id_in_the_same_direction(table_class):
    names = list(_orderings(table_class))
    assert names, "a paginated table with nothing to sort by"
    for name in names:
        for alias in (name, f"-{name}"):
            table = table_class(_rows(table_class), order_by=alias)
            ordering = [str(term) for term in table.data.data.query.order_by]
            last = ordering[-1].lstrip("-")
            assert last in ("pk", "id", table_class.tie_breaker), (alias, ordering)
            assert ordering[-1].startswith("-") == ordering[0].startswith("-"), (alias, ordering)
