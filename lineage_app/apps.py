from __future__ import annotations

from django.apps import AppConfig


class LineageAppConfig(AppConfig):
    name = "lineage_app"
    verbose_name = "Lineage"
    default_auto_field = "django.db.models.BigAutoField"
