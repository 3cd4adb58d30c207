"""An operator's levers on an unproven effect."""

from __future__ import annotations

from typing import Any

from django import forms

from reconcile_app.console.forms.common import JustificationField, NotStorableJSON, json_typed
from reconcile_app.limits import MAX_REASON_CHARACTERS


class EffectResolveForm(forms.Form):
    """An operator's verdict on an unproven effect: what happened, and how they know."""

    outcome = forms.CharField(max_length=20, required=False, strip=True)
    reason = JustificationField(max_length=MAX_REASON_CHARACTERS, required=False, strip=True)
    confirmed_by_owner = forms.BooleanField(required=False)


class EffectEscalateForm(forms.Form):
    """Hand an unproven effect to its owner, saying what has been tried."""

    reason = JustificationField(max_length=MAX_REASON_CHARACTERS, required=False, strip=True)


class EffectCompensateForm(forms.Form):
    """An operator's compensating action: which action, the value it writes, and why.

    The value is JSON when it parses as JSON (`42`, `true`, `{"a": 1}`), otherwise the text
    itself: what an operator types for a status (`manual_review`) is the string it means.
    """

    action = forms.CharField(max_length=150, strip=True)
    resulting_value = forms.CharField(max_length=65536, strip=True)
    reason = JustificationField(max_length=MAX_REASON_CHARACTERS, strip=True)

    def clean_resulting_value(self) -> Any:
        text = self.cleaned_data["resulting_value"]
        try:
            return json_typed(text)
        except NotStorableJSON as exc:
            raise forms.ValidationError(f"The value cannot be stored: {exc}") from exc
        except ValueError:
            return text
