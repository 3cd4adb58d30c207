"""A reviewer's decision on a suggested memory."""

from __future__ import annotations

from django import forms

from reconcile_app.console.forms.common import JustificationField
from reconcile_app.limits import MAX_REASON_CHARACTERS


class PromotionDecisionForm(forms.Form):
    """Promote or reject: a rationale, which the service requires (`rationale_required`), so a
    blank one comes back beside the form with the service's own message."""

    rationale = JustificationField(max_length=MAX_REASON_CHARACTERS, required=False, strip=True)
