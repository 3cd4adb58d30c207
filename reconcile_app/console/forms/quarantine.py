"""Quarantining a target and lifting a quarantine."""

from __future__ import annotations

from django import forms

from reconcile_app.console.forms.common import JustificationField
from reconcile_app.limits import MAX_REASON_CHARACTERS

# What `<input type="datetime-local">` sends (seconds only when the browser shows them).
LOCAL_DATETIME = ["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d %H:%M:%S"]


class QuarantineForm(forms.Form):
    scope = forms.CharField(max_length=15, strip=True)
    target = forms.CharField(max_length=150, strip=True)
    reason = JustificationField(max_length=MAX_REASON_CHARACTERS, required=False, strip=True)
    # Interpreted in UTC, the time zone the whole console shows.
    ends_at = forms.DateTimeField(
        required=False,
        input_formats=LOCAL_DATETIME,
        error_messages={"invalid": "Use a date and time as YYYY-MM-DDTHH:MM (UTC)."},
    )
    confirm = forms.CharField(max_length=150, required=False, strip=False)

    def confirmed(self) -> bool:
        """The operator typed the target's name exactly (no trimming, no case folding)."""
        return self.cleaned_data.get("confirm") == self.cleaned_data.get("target")


class QuarantineLiftForm(forms.Form):
    reason = JustificationField(max_length=MAX_REASON_CHARACTERS, required=False, strip=True)
