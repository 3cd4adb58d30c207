"""Inputs of the drills page: the two start forms (the runs list's filters: filtersets.py).

The forms check what the run itself would refuse (the parameters' own `check()`), so an
operator sees a bad horizon beside the field instead of a failed run a second later. The
console's defaults are the seed's, except for fewer episodes, so a benchmark started here
finishes in about a second.
"""

from __future__ import annotations

from typing import Any

from django import forms

from drills_app.choices import DrillRunKind
from drills_app.drift import DriftParameters
from drills_app.scenarios import DrillParameters
from reconcile_app.console.forms.common import JustificationField
from reconcile_app.limits import MAX_REASON_CHARACTERS

CONSOLE_EPISODES = 500
MAX_EPISODES = 5000
MAX_HORIZON = 40
MAX_TRIALS = 20
SEED = DriftParameters()


def _number(**attrs: Any) -> forms.NumberInput:
    return forms.NumberInput(attrs={"class": "num-input", **attrs})


class StartForm(forms.Form):
    """Both forms sit on one page: element ids carry the form's name (`drift-episodes`)."""

    prefix_id = "start"
    # A run injects faults or loads the machine: why it was started goes on the audit trail.
    reason = JustificationField(
        label="Reason",
        max_length=MAX_REASON_CHARACTERS,
        strip=True,
        widget=forms.TextInput(attrs={"placeholder": "Why run it now? Auditors will read this."}),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", f"{self.prefix_id}-%s")
        super().__init__(*args, **kwargs)
        self.order_fields([name for name in self.fields if name != "reason"] + ["reason"])


class DriftBenchmarkForm(StartForm):
    prefix_id = "drift"
    kind = forms.CharField(widget=forms.HiddenInput, initial=DrillRunKind.DRIFT_BENCHMARK)
    episodes = forms.IntegerField(
        label="Episodes per horizon",
        min_value=1,
        max_value=MAX_EPISODES,
        initial=CONSOLE_EPISODES,
        widget=_number(),
        help_text=f"The seed ran {SEED.episodes:,}.",
    )
    min_horizon = forms.IntegerField(
        label="Shortest horizon",
        min_value=1,
        max_value=MAX_HORIZON,
        initial=SEED.min_horizon,
        widget=_number(),
    )
    max_horizon = forms.IntegerField(
        label="Longest horizon",
        min_value=1,
        max_value=MAX_HORIZON,
        initial=SEED.max_horizon,
        widget=_number(),
        help_text="In compactions.",
    )
    interval = forms.IntegerField(
        label="Steps per compaction",
        min_value=1,
        max_value=100,
        initial=SEED.interval,
        widget=_number(),
    )
    mutation_rate = forms.FloatField(
        label="Mutation",
        min_value=0.0,
        max_value=1.0,
        initial=SEED.mutation_rate,
        widget=_number(step=0.01),
        help_text="Chance a step changes a field.",
    )
    omission_rate = forms.FloatField(
        label="Omission",
        min_value=0.0,
        max_value=1.0,
        initial=SEED.omission_rate,
        widget=_number(step=0.01),
        help_text="Chance a compaction drops an update.",
    )
    # Any seed draws distinct streams; the cap keeps it a number people read and type.
    seed = forms.IntegerField(
        label="Seed", min_value=0, max_value=2**63 - 1, initial=SEED.seed, widget=_number()
    )

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        low, high = cleaned.get("min_horizon"), cleaned.get("max_horizon")
        if low is not None and high is not None and low > high:
            self.add_error("max_horizon", "Must be at least the shortest horizon.")
        return cleaned

    def parameters(self) -> dict[str, Any]:
        values = {
            name: self.cleaned_data[name] for name in self.fields if name not in ("kind", "reason")
        }
        parameters = DriftParameters(**values)
        parameters.check()
        return parameters.as_dict()


class DrillForm(StartForm):
    prefix_id = "drill"
    kind = forms.CharField(widget=forms.HiddenInput, initial=DrillRunKind.DRILL)
    repeat = forms.IntegerField(
        label="Trials per scenario",
        min_value=1,
        max_value=MAX_TRIALS,
        initial=DrillParameters().repeat,
        widget=_number(),
        help_text="Each trial runs the protocol and the baseline on the same inputs.",
    )

    def parameters(self) -> dict[str, Any]:
        parameters = DrillParameters(repeat=self.cleaned_data["repeat"])
        parameters.check()
        return parameters.as_dict()


START_FORMS: dict[str, type[forms.Form]] = {
    DrillRunKind.DRIFT_BENCHMARK: DriftBenchmarkForm,
    DrillRunKind.DRILL: DrillForm,
}
