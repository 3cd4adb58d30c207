"""Values a reader cannot see as they are: a bidi override, a zero-width space, a blank or
padded string. The console shows them escaped, so an approval page shows the value the
policy compared and the owner will be sent, not another one drawn in its place."""

from __future__ import annotations

import pytest

from reconcile_app.models import Escalation
from reconcile_app.services.quarantine import quarantine_apply, quarantine_create
from reconcile_app.templatetags.reconcile_tags import jsonvalue
from tests.conftest import COLLECTIONS
from tests.reconcile_app.console.memory_world import (  # noqa: F401 (fixtures)
    basis,
    write,
)
from tests.reconcile_app.console.test_escalation_proposals import (
    SUBJECT,
    claim,
    contradicted,  # noqa: F401 (a fixture)
    page_of,
)

# Drawn right to left, "\u202edloh_latot" reads "total_hold".
OVERRIDDEN = "\u202edloh_latot"


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (OVERRIDDEN, '"\\u202edloh_latot"'),
        ("ho\u200bld", '"ho\\u200bld"'),
        ("hold\u2066", '"hold\\u2066"'),
        ("tag\U000e0041", '"tag\\udb40\\udc41"'),
        ("\u3164", '"\\u3164"'),
        ("hold ", '"hold "'),
        ("", '""'),
        ("hold\x85", '"hold\\u0085"'),
        ({"note": "a\u202eb"}, '{"note": "a\\u202eb"}'),
    ],
)
def test_a_value_with_hidden_characters_shows_them_escaped(value, shown):
    assert jsonvalue(value) == shown


# Persian spells words with a zero-width non-joiner; emoji sequences with a joiner.
PERSIAN = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"


@pytest.mark.parametrize(
    "value",
    ["hold", "東京都港区", "حساب مغلق", "שלום", "café", "cafe\u0301", PERSIAN, "👨\u200d👩"],
)
def test_text_in_any_script_shows_as_written(value):
    assert jsonvalue(value) == value


def test_structured_values_in_other_scripts_stay_readable():
    assert jsonvalue({"city": "東京", "name": "Zoë"}) == '{"city": "東京","name": "Zoë"}'


def test_approval_page_shows_an_overridden_proposed_value_escaped(
    contradicted,
    agent,
    reviewer_browser,
):
    response = agent.post(
        "/api/v1/reconcile",
        {
            "subject": SUBJECT,
            "purpose": "collections",
            "decision_class": COLLECTIONS,
            "proposed_action": "release_collections_hold",
            "proposed_value": OVERRIDDEN,
            "claims": [claim("collect")],
        },
    )
    assert response.status_code == 201, response.content
    assert response.json()["decision"]["result"] == "escalate"
    escalation = Escalation.objects.get(snapshot__snapshot_id=response.json()["snapshot_id"])

    page = page_of(reviewer_browser, escalation.escalation_id)

    assert "\u202e" not in page
    assert "&quot;\\u202edloh_latot&quot;" in page


def test_a_reason_with_a_bidi_override_cannot_reverse_the_sentence_around_it(
    operator_browser, operator, agent, basis
):
    """A reason is prose, shown as typed; in the middle of a sentence it is isolated, so an
    unclosed U+202E in it does not run on and reverse what the page says after it."""
    record = write(agent, "episodic")
    reason = "planted by a prompt \u202etpmorp"
    quarantine = quarantine_create(
        scope="memory", target=record.memory_id, reason=reason, actor=operator.user
    )
    quarantine_apply(quarantine_id=quarantine.quarantine_id)

    page = operator_browser.get(f"/memories/{record.memory_id}/").content.decode()

    banner = page[page.index('id="memory-quarantined"') :]
    assert f"(<bdi>{reason}</bdi>): claims citing it" in banner
