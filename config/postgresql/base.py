"""Django's PostgreSQL backend, with a health check that costs no round trip.

Kept connections (CONN_MAX_AGE) outlive a PostgreSQL restart: without a check, the first
request each web worker serves afterwards fails on its dead connection (503
`database_unavailable`; Celery closes a task's connections before and after it). Django's
own check (CONN_HEALTH_CHECKS) sends `SELECT 1` at the start of every request, a round trip
on the gate's hot path. An idle connection in autocommit has nothing to read unless the
server has hung up: a server that shuts down or terminates the backend sends its error and
closes, and the socket turns readable. So the check asks the socket (one `poll`, no I/O) and
only when something is there runs Django's own check, which closes a dead connection so
that the request opens a fresh one.
"""

from __future__ import annotations

import select

import psycopg
from django.db.backends.postgresql.base import DatabaseWrapper as PostgreSQLDatabaseWrapper


class DatabaseWrapper(PostgreSQLDatabaseWrapper):
    def close_if_health_check_failed(self) -> None:
        # Django's own attributes (the stubs know neither): CONN_HEALTH_CHECKS, and whether
        # this request has checked already.
        enabled: bool = getattr(self, "health_check_enabled", False)
        done: bool = getattr(self, "health_check_done", False)
        if self.connection is None or not enabled or done:
            return
        if self._server_spoke() and not self.is_usable():
            self.close()
        self.health_check_done = True

    def _server_spoke(self) -> bool:
        """Whether the server sent anything (an error, a close) while the connection idled."""
        driver = self.connection
        if driver.closed or driver.broken:
            return True
        try:
            poller = select.poll()
            poller.register(driver.pgconn.socket, select.POLLIN)
            return bool(poller.poll(0))
        except (OSError, ValueError, psycopg.Error):  # no socket any more
            return True
