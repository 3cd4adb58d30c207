"""Run Python in a new interpreter at the project's root, as a server process loads it.

For what must not touch the test process: settings read at import, a garbage collector
frozen or collected, a worker's start-up hooks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from typing import Any

from django.conf import settings


def fresh_python(code: str, *args: str, env: Mapping[str, str] | None = None) -> str:
    """`code`'s standard output; `env` replaces this process's environment when given."""
    environment = {**(os.environ if env is None else env)}
    environment.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    completed = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=settings.BASE_DIR,
        env=environment,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return completed.stdout


def fresh_python_json(code: str, *args: str) -> Any:
    """The JSON document `code` prints last."""
    return json.loads(fresh_python(code, *args).strip().splitlines()[-1])
