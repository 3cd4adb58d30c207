#!/usr/bin/env python
from __future__ import annotations

import os
import sys
import uuid


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.management import execute_from_command_line

    from config.logs import request_id_var

    # One id for the run, as a web request has: every audit row and log line a command
    # writes (load_contracts' contracts, sources and classes; an access grant) carries it, so
    # an auditor finds one run's rows together.
    request_id_var.set(uuid.uuid4().hex)
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
