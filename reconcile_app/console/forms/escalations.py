"""A reviewer's decision on an escalation."""

from __future__ import annotations

from django import forms

from reconcile_app.console.forms.common import JustificationField
from reconcile_app.limits import MAX_REASON_CHARACTERS


class EscalationDecisionForm(forms.Form):
    """A reviewer's approve or reject: a rationale and, for fact keys, the record to keep."""

    rationale = JustificationField(max_length=MAX_REASON_CHARACTERS, required=False, strip=True)
    selected_ref = forms.CharField(max_length=100, required=False, strip=True)
