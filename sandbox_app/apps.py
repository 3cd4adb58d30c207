from __future__ import annotations

from django.apps import AppConfig


class SandboxAppConfig(AppConfig):
    name = "sandbox_app"
    verbose_name = "Sandbox owner system"
    default_auto_field = "django.db.models.BigAutoField"
