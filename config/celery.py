"""The Celery application. Settings come from Django settings under the CELERY_ namespace."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("reconcile")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
