"""The gate's request body validated with fields built once per thread
(reconcile_app/api/kept_fields.py) answers exactly as DRF's stock per-instance copy does."""

from __future__ import annotations

import threading
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from drills_app.bench.bare import StockReconcileInput
from reconcile_app.api.snapshot_serializers import ReconcileInput
from reconcile_app.errors import ValidationFailed

identifiers = st.one_of(
    st.sampled_from(["acct-1", "collections_status", "case-service", "a" * 200]),
    st.sampled_from(["", "has space", "ü-ber", "a" * 201, "x\x00y"]),
    st.integers(),
    st.none(),
    st.booleans(),
)
texts = st.one_of(st.text(max_size=160), st.integers(), st.none(), st.lists(st.text(), max_size=2))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=6,
)
times = st.one_of(
    st.sampled_from(["2026-12-01T10:00:00Z", "2026-12-01T10:00:00+02:00", "yesterday", ""]),
    st.none(),
    st.integers(),
)
claims = st.fixed_dictionaries(
    {},
    optional={
        "memory_id": identifiers,
        "subject": identifiers,
        "field": identifiers,
        "value": json_values,
        "written_at": times,
        "memory_class": identifiers,
        "purpose": texts,
        "derived_from": st.one_of(st.lists(texts, max_size=3), texts),
        "note": texts,
    },
)
bodies = st.one_of(
    st.fixed_dictionaries(
        {},
        optional={
            "subject": identifiers,
            "purpose": texts,
            "decision_class": identifiers,
            "proposed_action": texts,
            "proposed_value": json_values,
            "contract_version": texts,
            "claims": st.one_of(st.lists(claims, max_size=3), claims, texts),
        },
    ),
    json_values,
)


def outcome(serializer: Any) -> tuple[Any, ...]:
    try:
        valid = serializer.is_valid()
    except ValidationFailed as refused:  # a malformed identifier: 400 `invalid_identifier`
        return ("refused", str(refused), refused.code)
    return valid, serializer.errors, serializer.validated_data if valid else None


@settings(max_examples=300, deadline=None)
@given(first=bodies, second=bodies)
def test_kept_fields_answer_as_drf_stock_fields(first: Any, second: Any) -> None:
    # Two bodies in a row on the same thread: nothing of the first reaches the second.
    for body in (first, second):
        assert outcome(ReconcileInput(data=body)) == outcome(StockReconcileInput(data=body))


def test_fields_are_built_once_per_thread_and_bound_to_each_instance() -> None:
    first = ReconcileInput(data={}, context={"call": 1})
    second = ReconcileInput(data={}, context={"call": 2})
    assert second.fields["subject"] is first.fields["subject"]
    # The instance that reads its fields (to validate) is their root.
    for serializer, call in ((first, 1), (second, 2), (first, 1)):
        claims = serializer.fields["claims"]
        claim_field = claims.child.fields["subject"]  # type: ignore[attr-defined]
        assert claim_field.root is serializer
        assert claim_field.context == {"call": call}

    elsewhere: dict[str, Any] = {}

    def build() -> None:
        elsewhere["field"] = ReconcileInput(data={}).fields["subject"]

    thread = threading.Thread(target=build)
    thread.start()
    thread.join()
    assert elsewhere["field"] is not first.fields["subject"]


def test_stock_fields_are_copied_per_instance() -> None:
    # The bare endpoint's serializer keeps DRF's behaviour: what the benchmark compares with.
    assert StockReconcileInput().fields["subject"] is not StockReconcileInput().fields["subject"]
