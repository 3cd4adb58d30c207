"""Console forms: the operator's and reviewer's inputs, and the look of the shared filter forms.

Forms clean and bound what was typed; the domain's rules (a rationale or a reason is required,
a selection must be a candidate) stay in the services, whose refusals the pages show inline.
"""

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


class EscalationDecisionForm(forms.Form):
    """A reviewer's approve or reject: a rationale and, for fact keys, the record to keep."""

    rationale = forms.CharField(max_length=4000, required=False, strip=True)
    selected_ref = forms.CharField(max_length=100, required=False, strip=True)


class EffectResolveForm(forms.Form):
    """An operator's verdict on an unproven effect: what happened, and how they know."""

    outcome = forms.CharField(max_length=20, required=False, strip=True)
    reason = forms.CharField(max_length=4000, required=False, strip=True)


class EffectEscalateForm(forms.Form):
    """Hand an unproven effect to its owner, saying what has been tried."""

    reason = forms.CharField(max_length=4000, required=False, strip=True)


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
