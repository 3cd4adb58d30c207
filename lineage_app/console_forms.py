"""Console forms for lineage: the explorer's search, a correction, a replay.

They clean what was typed; the rules (a correction needs a reason, an entry is corrected
once) stay in the services, whose refusals the pages show beside the form.
"""

from __future__ import annotations

import json
from typing import Any

from django import forms

from lineage_app.selectors.graph import DEFAULT_GRAPH_DEPTH, MAX_GRAPH_DEPTH

DEPTH_CHOICES = [(depth, str(depth)) for depth in range(1, MAX_GRAPH_DEPTH + 1)]


class ExplorerForm(forms.Form):
    node = forms.CharField(
        max_length=300,
        required=False,
        strip=True,
        label="Node",
        widget=forms.TextInput(
            attrs={
                "type": "search",
                "placeholder": "snapshot id, evidence id, effect key, memory id or kind:ref",
                "autocomplete": "off",
                "spellcheck": "false",
            }
        ),
    )
    depth = forms.TypedChoiceField(
        choices=DEPTH_CHOICES,
        coerce=int,
        required=False,
        empty_value=DEFAULT_GRAPH_DEPTH,  # type: ignore[arg-type]  # coerced like any choice
        label="Depth",
    )

    def depth_value(self) -> int:
        """The depth asked for, or the default when it is missing or out of range."""
        self.is_valid()
        depth = getattr(self, "cleaned_data", {}).get("depth")
        return depth if isinstance(depth, int) else DEFAULT_GRAPH_DEPTH


class CorrectionForm(forms.Form):
    """Revoke an entry, or supersede it with a replacement value (JSON)."""

    reason = forms.CharField(
        max_length=4000,
        strip=True,
        error_messages={"required": "A correction needs a reason."},
    )
    replacement = forms.CharField(max_length=20000, required=False, strip=True)

    def clean_replacement(self) -> dict[str, Any] | None:
        raw = self.cleaned_data.get("replacement") or ""
        if not raw:
            return None
        try:
            return {"value": json.loads(raw)}
        except ValueError as exc:
            raise forms.ValidationError(
                'The replacement must be a JSON value: "hold", 42, true, null or {"a": 1}.'
            ) from exc


class ReplayForm(forms.Form):
    mode = forms.ChoiceField(choices=[("as_recorded", "as recorded"), ("corrected", "corrected")])
