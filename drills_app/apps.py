from __future__ import annotations

from django.apps import AppConfig


class DrillsAppConfig(AppConfig):
    name = "drills_app"
    verbose_name = "Drills and benchmarks"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Operational metrics show the last drill; reconcile_app asks whoever registered.
        from drills_app.selectors import drill_last_summary
        from reconcile_app.selectors.metrics import last_drill_reader_register

        last_drill_reader_register(drill_last_summary)
