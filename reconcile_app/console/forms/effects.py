"""An operator's levers on an unproven effect."""

from __future__ import annotations

from django import forms


class EffectResolveForm(forms.Form):
    """An operator's verdict on an unproven effect: what happened, and how they know."""

    outcome = forms.CharField(max_length=20, required=False, strip=True)
    reason = forms.CharField(max_length=4000, required=False, strip=True)


class EffectEscalateForm(forms.Form):
    """Hand an unproven effect to its owner, saying what has been tried."""

    reason = forms.CharField(max_length=4000, required=False, strip=True)
