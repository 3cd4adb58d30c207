"""The explorer's search: a node, and how many hops to draw each way."""

from __future__ import annotations

from typing import Any

from django import forms

from lineage_app.registry import registry
from lineage_app.selectors.graph import DEFAULT_GRAPH_DEPTH, MAX_GRAPH_DEPTH

DEPTH_CHOICES = [(depth, str(depth)) for depth in range(1, MAX_GRAPH_DEPTH + 1)]


class ExplorerForm(forms.Form):
    node = forms.CharField(
        max_length=300,
        required=False,
        strip=True,
        label="Node",
        widget=forms.TextInput(
            attrs={"type": "search", "autocomplete": "off", "spellcheck": "false"}
        ),
    )
    depth = forms.TypedChoiceField(
        choices=DEPTH_CHOICES,
        coerce=int,
        required=False,
        empty_value=DEFAULT_GRAPH_DEPTH,  # type: ignore[arg-type]  # coerced like any choice
        label="Depth",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The host says which ids its people paste (registry.configure_explorer).
        self.fields["node"].widget.attrs["placeholder"] = registry.explorer.search_placeholder

    def depth_value(self) -> int:
        """The depth asked for, or the default when it is missing or out of range."""
        self.is_valid()
        depth = getattr(self, "cleaned_data", {}).get("depth")
        return depth if isinstance(depth, int) else DEFAULT_GRAPH_DEPTH
