from __future__ import annotations

from django.apps import AppConfig


class ReconcileAppConfig(AppConfig):
    name = "reconcile_app"
    verbose_name = "Reconcile"
    default_auto_field = "django.db.models.BigAutoField"
