"""Every enumerated value of drills_app, in one place."""

from __future__ import annotations

from django.db import models


class DrillRunKind(models.TextChoices):
    DRILL = "drill"
    DRIFT_BENCHMARK = "drift_benchmark"


class DrillRunStatus(models.TextChoices):
    RUNNING = "running"
    COMPLETE = "complete"
    FAILED = "failed"
