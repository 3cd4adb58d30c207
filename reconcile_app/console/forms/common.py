"""How the console dresses the filter forms it shares with the API (filtersets), and the
inputs several areas use."""

from __future__ import annotations

import json
from typing import Any

from django import forms

from reconcile_app.instants import InstantIsoFormField
from reconcile_app.limits import json_unstorable, says_nothing

UTC_NOTE = " (UTC)"


def dress_filter_form(form: forms.Form, *, datalists: dict[str, str] | None = None) -> None:
    """Give the filterset's form the console's inputs without redefining its fields.

    The filtersets are shared with the API, so the console only adjusts widgets: search
    inputs, "any" as the empty choice, and suggestion lists for free-text fields; a time
    filter's label says the zone a time without an offset is read in.
    """
    for name, field in form.fields.items():
        widget = field.widget
        if isinstance(field, InstantIsoFormField) and not str(field.label).endswith(UTC_NOTE):
            field.label = f"{field.label}{UTC_NOTE}"
        if isinstance(widget, forms.Select):
            # django-filter adds its empty choice when iterating, from `empty_label`.
            field.empty_label = "any"  # type: ignore[attr-defined]
            field.widget.choices = [
                (value, _as_the_rows_show(value, label))
                for value, label in field.choices  # type: ignore[attr-defined]
            ]
        elif isinstance(widget, forms.TextInput):
            widget.input_type = "search"
            widget.attrs.setdefault("placeholder", "any")
            widget.attrs.setdefault("autocomplete", "off")
        if datalists and name in datalists:
            widget.attrs["list"] = datalists[name]


def _as_the_rows_show(value: Any, label: Any) -> Any:
    """A choice named as the rows' badges name it (`memory vs state`, `postcondition failed`)
    rather than by Django's title-cased default label ("Memory Vs State"); a label the
    filterset chose itself stays."""
    if isinstance(value, str) and label == value.replace("_", " ").title():
        return value.replace("_", " ")
    return label


class JustificationField(forms.CharField):
    """A reason, rationale or note. Text with nothing visible in it (zero-width spaces, a
    byte-order mark: `limits.says_nothing`) is blank, so the form refuses it where it refuses
    a blank one, beside the field, rather than the service after the form has passed it."""

    def to_python(self, value: Any) -> str | None:
        text: str | None = super().to_python(value)
        return self.empty_value if isinstance(text, str) and says_nothing(text) else text


class OneOfSelect(forms.Select):
    """A single-choice select for a multiple-choice filter: the URL carries one value, and
    "any" (empty) is no filter rather than an invalid choice."""

    def value_from_datadict(self, data: Any, files: Any, name: str) -> Any:
        values = data.getlist(name) if hasattr(data, "getlist") else [data.get(name)]
        return [value for value in values if value]


def dress_status_filter(form: forms.Form, name: str = "status") -> None:
    field = form.fields[name]
    # The field's own choices may already open with "any" (dress_filter_form gives every
    # select that empty choice): one "any", first.
    chosen = [(value, label) for value, label in field.choices if value != ""]  # type: ignore[attr-defined]
    field.widget = OneOfSelect(choices=[("", "any"), *chosen])


def dress_datetime_filters(form: forms.Form, *names: str) -> None:
    """Date-range filters get the browser's date-time picker (values are ISO 8601, UTC), and
    say so on their label."""
    for name in names:
        field = form.fields[name]
        if not str(field.label).endswith(UTC_NOTE):
            field.label = f"{field.label}{UTC_NOTE}"
        widget = field.widget
        widget.input_type = "datetime-local"  # type: ignore[attr-defined]
        widget.attrs.pop("placeholder", None)
        widget.attrs["step"] = "1"


class NotStorableJSON(ValueError):
    """Typed JSON that decodes but cannot be stored: the message says why."""


def json_typed(text: str) -> Any:
    """The JSON value an operator typed. ValueError when it is no JSON, too deeply nested, or
    holds what no store keeps (NUL, a lone surrogate: `NotStorableJSON`), so a form refuses
    it with its own message rather than failing at the write."""
    try:
        value = json.loads(text)
    except RecursionError as exc:
        raise ValueError("nested too deeply") from exc
    if (problem := json_unstorable(value)) is not None:
        raise NotStorableJSON(problem)
    return value
