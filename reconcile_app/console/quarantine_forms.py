"""Inputs of the quarantine dialogs and the filter widgets of the oversight pages.

As elsewhere in the console, forms only clean what was typed: a missing reason, an unknown
source or a second quarantine of the same target are refused by the service, whose codes the
dialog shows. The typed confirmation is the console's own safeguard, so it is checked here.
"""

from __future__ import annotations

from typing import Any

from django import forms

# What `<input type="datetime-local">` sends (seconds only when the browser shows them).
LOCAL_DATETIME = ["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d %H:%M:%S"]


class QuarantineForm(forms.Form):
    scope = forms.CharField(max_length=15, strip=True)
    target = forms.CharField(max_length=150, strip=True)
    reason = forms.CharField(max_length=4000, required=False, strip=True)
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
    reason = forms.CharField(max_length=4000, required=False, strip=True)


class OneOfSelect(forms.Select):
    """A single-choice select for a multiple-choice filter: the URL carries one value, and
    "any" (empty) is no filter rather than an invalid choice."""

    def value_from_datadict(self, data: Any, files: Any, name: str) -> Any:
        values = data.getlist(name) if hasattr(data, "getlist") else [data.get(name)]
        return [value for value in values if value]


def dress_status_filter(form: forms.Form, name: str = "status") -> None:
    field = form.fields[name]
    field.widget = OneOfSelect(choices=[("", "any"), *field.choices])  # type: ignore[attr-defined]


def dress_datetime_filters(form: forms.Form, *names: str) -> None:
    """Date-range filters get the browser's date-time picker (values are ISO 8601, UTC)."""
    for name in names:
        widget = form.fields[name].widget
        widget.input_type = "datetime-local"  # type: ignore[attr-defined]
        widget.attrs.pop("placeholder", None)
        widget.attrs["step"] = "1"
