"""A reviewer's request to make a contract version active."""

from __future__ import annotations

from django import forms

from reconcile_app.console.forms.common import JustificationField
from reconcile_app.limits import MAX_REASON_CHARACTERS


class ContractActivationForm(forms.Form):
    """A rationale, which the service requires (`rationale_required`, so a blank one comes
    back beside the form with the service's own message), and the version's label typed out
    (`class@version`): activating retires the version in force, so it is never one click."""

    rationale = JustificationField(max_length=MAX_REASON_CHARACTERS, required=False, strip=True)
    confirm = forms.CharField(max_length=250, required=False, strip=False)

    def confirmed(self, label: str) -> bool:
        """The reviewer typed the label exactly (no trimming, no case folding)."""
        return self.cleaned_data.get("confirm") == label
