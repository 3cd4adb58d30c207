"""Django system checks: settings that would make the product misbehave refuse to start
(`manage.py check`, and every command that runs checks: migrate, `./dev up`, `./dev serve`)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Error, register

from reconcile_app.sources.owner_client import owner_timeout_ms_most


@register()
def owner_timeout_within_task_limit(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    """The `http` adapter's default timeout obeys the bound source files do (`timeout_ms`):
    a readback or resolution asks its owner up to four times before its task is cut short."""
    default_ms = round(settings.RECONCILE_HTTP_TIMEOUT_SECONDS * 1000)
    if default_ms <= (most := owner_timeout_ms_most()):
        return []
    return [
        Error(
            f"RECONCILE_HTTP_TIMEOUT_MS is {default_ms}; it may be at most {most}, a fifth of "
            "RECONCILE_OWNER_TASK_SOFT_TIME_LIMIT",
            hint="Lower RECONCILE_HTTP_TIMEOUT_MS or raise RECONCILE_OWNER_TASK_SOFT_TIME_LIMIT.",
            id="reconcile.E001",
        )
    ]
