"""A reason, rationale or note must say something a reader can see.

Audit rows answer "why" for every operator action. A reason of zero-width spaces, a
byte-order mark or a Hangul filler passes `str.strip()` and an eye reading the audit trail
sees an empty cell: each operation refuses it with its own `<field>_required`, and writes
nothing.
"""

from __future__ import annotations

import pytest

from reconcile_app.limits import says_nothing
from reconcile_app.models import AuditEvent, Correction, Quarantine
from tests.factories import EvidenceFactory

INVISIBLE = [
    "\u200b",  # zero-width space
    "\u200b\u200c\u200d",  # and the joiners
    "\ufeff",  # byte-order mark
    "\u2060\u00a0\u3000",  # word joiner, no-break space, ideographic space
    "\u200f\u202e",  # bidi marks
    "\u3164\u2800",  # a Hangul filler, the blank Braille pattern
    "\u0301",  # a combining accent on nothing
]


@pytest.mark.parametrize("text", INVISIBLE)
def test_invisible_text_says_nothing(text):
    assert says_nothing(text)


@pytest.mark.parametrize("text", ["Owner confirmed", "\u200bok", "理由あり", "سبب", "🔥", "0"])
def test_visible_text_says_something(text):
    assert not says_nothing(text)


@pytest.mark.parametrize(
    ("path", "body", "code"),
    [
        ("/api/v1/quarantines", {"scope": "source", "target": "case-service"}, "reason_required"),
        ("/api/v1/corrections", {"evidence_id": "ev-001"}, "reason_required"),
        ("/api/v1/contradictions/1/resolve", {}, "note_required"),
        ("/api/v1/effects/u-1/resolve", {"outcome": "not_executed"}, "reason_required"),
        ("/api/v1/escalations/esc_x/approve", {}, "rationale_required"),
    ],
)
@pytest.mark.parametrize("text", [INVISIBLE[1], INVISIBLE[5]])
def test_an_invisible_justification_is_refused_and_nothing_is_written(
    estate, operator, reviewer, path, body, code, text
):
    EvidenceFactory(evidence_id="ev-001")
    name = code.removesuffix("_required")
    persona = reviewer if "escalations" in path else operator
    audited = AuditEvent.objects.count()

    response = persona.post(path, {**body, name: text})

    assert response.status_code == 400, response.content
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == code
    assert not Quarantine.objects.exists()
    assert not Correction.objects.exists()
    assert AuditEvent.objects.count() == audited
