"""The operators' "Correct this entry" form on an evidence page.

It cleans what was typed; the rules (a correction needs a reason, an entry is corrected once)
stay in the service, whose refusals the page shows beside the form.
"""

from __future__ import annotations

from typing import Any

from django import forms

from reconcile_app.console.forms.common import JustificationField, NotStorableJSON, json_typed
from reconcile_app.limits import MAX_REASON_CHARACTERS


class CorrectionForm(forms.Form):
    """Revoke an entry, or supersede it with a replacement value (JSON)."""

    reason = JustificationField(
        max_length=MAX_REASON_CHARACTERS,
        strip=True,
        error_messages={"required": "A correction needs a reason."},
    )
    replacement = forms.CharField(max_length=20000, required=False, strip=True)

    def clean_replacement(self) -> dict[str, Any] | None:
        raw = self.cleaned_data.get("replacement") or ""
        if not raw:
            return None
        try:
            return {"value": json_typed(raw)}
        except NotStorableJSON as exc:
            raise forms.ValidationError(f"The replacement cannot be stored: {exc}") from exc
        except ValueError as exc:
            raise forms.ValidationError(
                'The replacement must be a JSON value: "hold", 42, true, null or {"a": 1}.'
            ) from exc
