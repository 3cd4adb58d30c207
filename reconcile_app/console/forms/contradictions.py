"""Resolving a contradiction."""

from __future__ import annotations

from django import forms

from reconcile_app.console.forms.common import JustificationField
from reconcile_app.limits import MAX_REASON_CHARACTERS


class ContradictionResolveForm(forms.Form):
    """Closing a contradiction needs a reason a later reader can act on."""

    note = JustificationField(
        max_length=MAX_REASON_CHARACTERS,  # as the bulk resolution's reason
        strip=True,
        error_messages={"required": "A note is required to resolve a contradiction."},
        widget=forms.TextInput(
            attrs={"placeholder": "Why is this resolved?", "autocomplete": "off"}
        ),
    )
