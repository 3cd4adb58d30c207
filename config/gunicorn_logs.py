"""gunicorn's own lines (start, workers booting and exiting, timeouts) and its access log as
one JSON object per line, like the application's (config/logs.py): a log store reading the
web stream parses every line the same way.

A `logger_class` (config/gunicorn.py), so that the handlers stay the ones gunicorn makes from
its flags (`--error-logfile`, `--access-logfile`, `--log-level`, none for no access log):
only their formatter and the request context change. Set up again on a reload (HUP).
"""

from __future__ import annotations

from typing import Any

from gunicorn.glogging import Logger

from config.logs import ContextFilter, JsonFormatter


class JsonLogger(Logger):
    def setup(self, cfg: Any) -> None:
        super().setup(cfg)
        for log in (self.error_log, self.access_log):
            for handler in log.handlers:
                handler.setFormatter(JsonFormatter())
                # The access line's request id in its field as well as in its message.
                handler.addFilter(ContextFilter())
