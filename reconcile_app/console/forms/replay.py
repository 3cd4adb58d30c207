"""The snapshot page's replay buttons: as recorded, or under today's corrections."""

from __future__ import annotations

from django import forms


class ReplayForm(forms.Form):
    mode = forms.ChoiceField(choices=[("as_recorded", "as recorded"), ("corrected", "corrected")])
