"""The facts list's filters."""

from __future__ import annotations

from django import forms


class FactFilterForm(forms.Form):
    """The facts list: narrow by key, and choose the date the rule is applied on."""

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
