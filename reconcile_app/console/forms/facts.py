"""The facts pages' filters."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django import forms
from django.utils import timezone

from reconcile_app.instants import instant
from reconcile_app.selectors.fact_history import fact_day

BELIEVED_AT_FORMATS = ["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M:%S.%f"]


class BelievedAtField(forms.DateTimeField):
    """A recorded time, as an instant in UTC.

    The picker (datetime-local) has no zone and works to the second; a link may carry any
    RFC 3339 time, with its offset and fraction, and is answered for exactly that instant.
    Shown back, a valid value is the picker's UTC form, so a time given with an offset (or
    a `Z`, which the picker cannot hold) stays in the picker.
    """

    def to_python(self, value: Any) -> datetime | None:
        result = super().to_python(value)
        if result is None:
            return None
        try:
            return instant(result)
        except ValueError as exc:
            raise forms.ValidationError(str(exc), code="invalid") from exc

    def bound_data(self, data: Any, initial: Any) -> Any:
        try:
            return self.to_python(data) or data
        except forms.ValidationError:
            return data


class FactFilterForm(forms.Form):
    """Narrow by key, choose the date the rule is applied on, and (one key's page) the
    recorded time whose beliefs are shown."""

    fact_key = forms.CharField(
        max_length=200,
        required=False,
        strip=True,
        label="Fact key",
        widget=forms.TextInput(
            attrs={"type": "search", "placeholder": "any", "autocomplete": "off"}
        ),
    )
    on = forms.DateField(
        required=False,
        label="On",
        input_formats=["%Y-%m-%d"],
        error_messages={"invalid": "Use a date as YYYY-MM-DD."},
        widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
    )
    as_of = BelievedAtField(
        required=False,
        label="Believed at (UTC)",
        input_formats=BELIEVED_AT_FORMATS,
        error_messages={"invalid": "Use a date and time, e.g. 2026-09-30T12:00."},
        widget=forms.DateTimeInput(
            attrs={"type": "datetime-local", "step": "1"}, format="%Y-%m-%dT%H:%M:%S"
        ),
    )

    def clean_as_of(self) -> datetime | None:
        as_of: datetime | None = self.cleaned_data.get("as_of")
        if as_of is not None and as_of > timezone.now():
            raise forms.ValidationError(
                "It is in the future: only what was already recorded can be shown.",
                code="as_of_in_future",
            )
        if as_of is not None:
            try:
                fact_day(as_of)  # the date the rule is applied on, unless `on` says otherwise
            except OverflowError as exc:
                # West of UTC, year 1's first hours fall before the calendar's first day.
                raise forms.ValidationError(
                    "It has no date in the fact timezone: choose a later time.",
                    code="invalid",
                ) from exc
        return as_of
