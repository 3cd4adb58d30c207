"""A refused field says why to assistive technology: every field the console marks
`aria-invalid` names its message with `aria-describedby`, every id a field points at exists
(Django points a field with help text at `<id>_helptext`), and a refusal that comes back as a
whole page puts focus on the refused field (`autofocus`), where a screen reader reads the
message with it."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from tests.drills_app.test_views import DRILL_POST
from tests.reconcile_app.console.quarantine_steps import create
from tests.reconcile_app.console.test_bulk import (  # noqa: F401 (a fixture)
    ALL_UNKNOWN,
    confirm,
    three,
)
from tests.reconcile_app.console.test_contradictions import (  # noqa: F401 (a fixture)
    contradiction,
    resolve,
)
from tests.reconcile_app.lineage_chain import (  # noqa: F401 (fixtures)
    chain,
    collectible,
)


class Fields(HTMLParser):
    """Each element's attributes, and the text inside each element with an id."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.elements: list[dict[str, str | None]] = []
        self.text: dict[str, str] = {}
        self._open: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        self.elements.append(found)
        if found.get("id") and tag not in ("input", "textarea", "select"):
            self.text[str(found["id"])] = ""
            self._open.append(str(found["id"]))

    def handle_data(self, data: str) -> None:
        for opened in self._open:
            self.text[opened] += data

    def invalid(self) -> list[dict[str, str | None]]:
        return [e for e in self.elements if e.get("aria-invalid") == "true"]


def assert_invalid_fields_say_why(html: str, message: str, *, autofocus: bool | None) -> None:
    page = Fields(html)
    invalid = page.invalid()
    assert invalid, "no field is marked invalid"
    for field in invalid:
        names = (field.get("aria-describedby") or "").split()
        assert names, f"{field.get('id') or field.get('name')} does not say why it is invalid"
        assert any(message in page.text.get(name, "") for name in names), (names, message)
        if autofocus is not None:
            assert ("autofocus" in field) is autofocus, field
    assert_every_description_exists(page)


def assert_every_description_exists(page: Fields) -> None:
    ids = {e["id"] for e in page.elements if e.get("id")}
    dangling = [
        (e.get("id") or e.get("name"), name)
        for e in page.elements
        for name in (e.get("aria-describedby") or "").split()
        if name not in ids
    ]
    assert not dangling, dangling


def test_a_refused_resolution_note_says_why(operator_browser, contradiction):
    response = resolve(operator_browser, contradiction, "   ", HTTP_HX_REQUEST="true")
    assert_invalid_fields_say_why(response.content.decode(), "A note is required", autofocus=False)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"reason": "   "}, "needs a reason"),
        ({"confirm": "case"}, "confirm"),
        ({"ends_at": "tomorrow"}, "ends_at"),
    ],
)
def test_a_refused_quarantine_dialog_field_says_why(operator_browser, estate, data, message):
    response = create(operator_browser, **data)
    assert response.status_code == 400
    assert_invalid_fields_say_why(response.content.decode(), message, autofocus=False)


def test_a_refused_escalation_reason_takes_focus_and_says_why(operator_browser, unknown_effect):
    response = operator_browser.post("/effects/u-1/escalate/", {"reason": "   "})
    assert response.status_code == 400
    assert_invalid_fields_say_why(response.content.decode(), "reason_required", autofocus=True)


def test_a_refused_decision_takes_focus_and_says_why(reviewer_browser, escalation):
    response = reviewer_browser.post(
        f"/escalations/{escalation.escalation_id}/reject/", {"rationale": "   "}
    )
    assert response.status_code == 400
    assert_invalid_fields_say_why(
        response.content.decode(), "a decision needs a rationale", autofocus=True
    )


def test_a_refused_correction_takes_focus_and_says_why(chain, operator_browser):
    response = operator_browser.post("/evidence/ev-collect/correct/", {"reason": ""})
    assert response.status_code == 400
    assert_invalid_fields_say_why(
        response.content.decode(), "A correction needs a reason.", autofocus=True
    )


def test_a_lineage_search_that_finds_nothing_says_why(operator_browser, db):
    response = operator_browser.get("/lineage/?node=evidence:no-such-entry")
    assert_invalid_fields_say_why(
        response.content.decode(), "No lineage node matches", autofocus=False
    )


def test_the_drill_forms_help_and_errors_are_where_their_fields_point(operator_browser):
    assert_every_description_exists(Fields(operator_browser.get("/drills/").content.decode()))
    data = {key: value for key, value in DRILL_POST.items() if key != "reason"}
    refused = operator_browser.post("/drills/", data).content.decode()
    assert_invalid_fields_say_why(refused, "This field is required", autofocus=None)


def test_a_refused_bulk_reason_takes_focus_and_says_why(three, operator_browser):
    response = confirm(operator_browser, {**ALL_UNKNOWN, "reason": "   "})
    assert response.status_code == 400
    assert_invalid_fields_say_why(
        response.content.decode(), "a bulk action needs a reason", autofocus=True
    )
