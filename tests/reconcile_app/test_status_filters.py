"""A status filter on a list is a WHERE on the row's own column, never a SELECT DISTINCT."""

from __future__ import annotations

import pytest

from reconcile_app.console.filtersets import ConsoleEffectFilterSet, ConsoleQuarantineFilterSet
from reconcile_app.filtersets import EffectFilterSet, QuarantineFilterSet
from reconcile_app.models import Effect, Quarantine


@pytest.mark.parametrize(
    ("filterset_class", "model", "statuses"),
    [
        (EffectFilterSet, Effect, ["unknown", "postcondition_failed"]),
        (ConsoleEffectFilterSet, Effect, ["unknown"]),
        (QuarantineFilterSet, Quarantine, ["applied"]),
        (ConsoleQuarantineFilterSet, Quarantine, ["applied", "applying"]),
    ],
)
def test_filtering_by_status_selects_no_distinct_rows(filterset_class, model, statuses):
    # DISTINCT over every column (JSON receipts and outcomes included) made PostgreSQL sort
    # the whole match before cutting a page: 100k effects, 4k unknown, 535 ms for page 1.
    filterset = filterset_class(data={"status": statuses}, queryset=model.objects.all())
    assert filterset.is_valid(), filterset.errors
    sql = str(filterset.qs.query)
    assert "DISTINCT" not in sql
    assert '."status" = ' in sql
