"""Resolving a contradiction."""

from __future__ import annotations

from django import forms


class ContradictionResolveForm(forms.Form):
    """Closing a contradiction needs a reason a later reader can act on."""

    note = forms.CharField(
        max_length=2000,
        strip=True,
        error_messages={"required": "A note is required to resolve a contradiction."},
        widget=forms.TextInput(
            attrs={"placeholder": "Why is this resolved?", "autocomplete": "off"}
        ),
    )
