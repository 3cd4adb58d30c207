"""Console forms: the operator's resolve note and the look of the shared filter forms."""

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


def dress_filter_form(form: forms.Form, *, datalists: dict[str, str] | None = None) -> None:
    """Give the filterset's form the console's inputs without redefining its fields.

    The filtersets are shared with the API, so the console only adjusts widgets: search
    inputs, "any" as the empty choice, and suggestion lists for free-text fields.
    """
    for name, field in form.fields.items():
        widget = field.widget
        if isinstance(widget, forms.Select):
            # django-filter adds its empty choice when iterating, from `empty_label`.
            field.empty_label = "any"  # type: ignore[attr-defined]
            field.widget.choices = field.choices  # type: ignore[attr-defined]
        elif isinstance(widget, forms.TextInput):
            widget.input_type = "search"
            widget.attrs.setdefault("placeholder", "any")
            widget.attrs.setdefault("autocomplete", "off")
        if datalists and name in datalists:
            widget.attrs["list"] = datalists[name]
