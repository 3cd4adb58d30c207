"""Sorting a paginated console table by a column keeps equal rows in one order (by id).

Without it, the database may order equal rows differently for page 1 and page 2, so a row
shows twice or not at all: an operator paging through 2,000 `unknown` effects sorted by
source would miss some."""

from __future__ import annotations

import re

import pytest

from reconcile_app.console.tables.audit import AuditTable
from reconcile_app.console.tables.contradictions import ContradictionTable
from reconcile_app.console.tables.effects import EffectTable
from reconcile_app.console.tables.escalations import EscalationTable
from reconcile_app.console.tables.promotions import PromotionTable
from reconcile_app.console.tables.quarantine import QuarantineHistoryTable
from reconcile_app.console.tables.snapshots import SnapshotTable

PAGINATED_TABLES = [
    AuditTable,
    ContradictionTable,
    EffectTable,
    EscalationTable,
    PromotionTable,
    QuarantineHistoryTable,
    SnapshotTable,
]


def _orderings(table_class):
    table = table_class(table_class._meta.model.objects.all())
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
            table = table_class(table_class._meta.model.objects.all(), order_by=alias)
            ordering = [str(term) for term in table.data.data.query.order_by]
            last = ordering[-1].lstrip("-")
            assert last in ("pk", "id"), (alias, ordering)
            assert ordering[-1].startswith("-") == ordering[0].startswith("-"), (alias, ordering)


@pytest.mark.django_db
def test_paging_a_list_sorted_by_a_repeated_value_shows_each_row_once(
    operator_browser, make_snapshot
):
    made = {make_snapshot(subject=f"account-{index:02d}").snapshot_id for index in range(27)}
    shown: list[str] = []
    for page in (1, 2):
        body = operator_browser.get(f"/snapshots/?sort=decision_class&page={page}").content.decode()
        shown += re.findall(r'href="/snapshots/([^"/]+)/"', body)
    assert sorted(set(shown)) == sorted(made)
    assert len(shown) == len(made)
