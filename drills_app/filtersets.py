"""Filters of the drills page's runs list."""

from __future__ import annotations

import django_filters

from drills_app.choices import DrillRunKind, DrillRunStatus
from drills_app.models import DrillRun


class DrillRunFilterSet(django_filters.FilterSet):
    kind = django_filters.ChoiceFilter(choices=DrillRunKind.choices)
    status = django_filters.ChoiceFilter(choices=DrillRunStatus.choices)

    class Meta:
        model = DrillRun
        fields = ["kind", "status"]
