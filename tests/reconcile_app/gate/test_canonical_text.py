"""The canonical text of a snapshot's content doubles as its stored JSON when it spells the
content exactly (reconcile_app/canonical.py: `canonical`; services/snapshot_statement.py).
Text only: no database needed."""

from __future__ import annotations

import json
from collections import OrderedDict
from datetime import UTC, datetime
from enum import StrEnum

from hypothesis import given
from hypothesis import strategies as st

from reconcile_app.canonical import canonical, canonical_json, normalise_numbers, same_value
from reconcile_app.services.snapshot_statement import _json, _snapshot_json

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)


def _has_integral_float(value):
    if isinstance(value, float):
        return value.is_integer()
    if isinstance(value, dict):
        return any(_has_integral_float(item) for item in value.values())
    if isinstance(value, list):
        return any(_has_integral_float(item) for item in value)
    return False


@given(json_values)
def test_exact_text_spells_the_value_and_is_its_canonical_json(value):
    encoded = canonical(value)
    assert encoded.text == canonical_json(value)
    assert encoded.exact is not _has_integral_float(value)
    if encoded.exact:
        # The same value, spelled the same way: 1 stays 1 and 1.5 stays 1.5.
        assert json.dumps(json.loads(encoded.text), sort_keys=True) == json.dumps(
            value, sort_keys=True
        )


def test_an_integral_float_or_a_time_is_respelled_so_the_text_is_not_exact():
    respelled = canonical({"amount": 100.0})
    assert respelled.text == '{"amount":100}'
    assert not respelled.exact
    moment = datetime(2026, 12, 2, 9, 30, tzinfo=UTC)
    encoded = canonical({"at": moment})
    assert encoded.text == '{"at":"2026-12-02T09:30:00Z"}'
    assert not encoded.exact
    assert canonical({"amount": 100, "ratio": 0.5, "ok": True, "none": None}).exact


def test_normalising_keeps_what_it_kept_before():
    class Status(StrEnum):
        OPEN = "open"

    normalised = normalise_numbers(OrderedDict(status=Status.OPEN, pair=(1.0, 2.5), flag=True))
    assert normalised == {"status": "open", "pair": [1, 2.5], "flag": True}
    assert type(normalised) is dict
    assert type(normalised["status"]) is Status
    assert type(normalised["pair"][0]) is int
    assert normalised["flag"] is True


def test_the_snapshot_row_sent_with_the_canonical_content_is_the_row_encoded_whole():
    content = {"binding": {"subject": "acct-1", "proposed_value": "hold"}, "claims": [{"n": 2}]}
    row = {"snapshot_id": "snap_1", "issued_at": datetime(2026, 12, 2, tzinfo=UTC)}
    row["content"] = content
    encoded = canonical(content)
    assert encoded.exact
    assert json.loads(_snapshot_json(row, encoded.text)) == json.loads(_json(row))
    assert _snapshot_json(row, None) == _json(row)


@given(json_values, json_values)
def test_same_value_is_equality_of_canonical_texts(left, right):
    # `same_value` compares strings, booleans and nulls without encoding them: the answer
    # must be the canonical texts' for every pair (1 and 1.0 the same, 1 and True not).
    assert same_value(left, right) == (canonical_json(left) == canonical_json(right))
    assert same_value(left, left)


def test_same_value_tells_apart_what_json_tells_apart():
    assert same_value("é", "é") and not same_value("é", "e\u0301")
    assert same_value("\ud800", "\ud800") and not same_value("\ud800", "\ud801")
    assert not same_value("1", 1) and not same_value(True, 1) and not same_value(None, "null")
    assert same_value(1, 1.0) and not same_value(False, 0) and same_value(None, None)
