"""One deadline for a whole owner call, from connecting to the answer's last byte.

httpx's timeouts are per operation: each read of the socket may take up to the timeout, so
an owner sending its status line and headers a byte at a time (a slow proxy, a wedged
server, a hostile one) held a call for as long as it went on. The body was already read
against a deadline (owner_client._answer_read), but the headers are read inside httpx,
before any of our code runs: a commit waited on them until the web server killed its worker
(the agent got a 500, the effect stayed `sent` until the sweep). Here every connect, write
and read of an owner call is given at most the time left before the call's deadline, and
none once it has passed: a read then raises httpcore.ReadTimeout, which httpx hands on as
httpx.ReadTimeout (a commit sent so is `unknown`, never rejected).
"""

from __future__ import annotations

import contextvars
import ssl
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import httpcore

# The monotonic time the owner call in progress (in this context) must be over by.
_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "owner_call_deadline", default=None
)


@contextmanager
def owner_call_deadline(seconds: float) -> Iterator[float]:
    """The calls made inside end within `seconds` from now; yields the deadline."""
    deadline = time.monotonic() + seconds
    token = _deadline.set(deadline)
    try:
        yield deadline
    finally:
        _deadline.reset(token)


def _within(timeout: float | None, late: Callable[[str], Exception]) -> float | None:
    """`timeout`, cut to the time left before the call's deadline (raises `late` after it)."""
    deadline = _deadline.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise late("the owner's answer did not arrive within the call's timeout")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _within(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _within(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        # Nothing of the request has left yet: a handshake past the deadline is a connect
        # timeout (for a commit: never sent, so not executed).
        within = _within(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._stream.start_tls(ssl_context, server_hostname, within))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class DeadlineBackend(httpcore.NetworkBackend):
    """The connection pool's network backend, every stream it opens held to the deadline."""

    def __init__(self, backend: httpcore.NetworkBackend) -> None:
        self._backend = backend

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        within = _within(timeout, httpcore.ConnectTimeout)
        stream = self._backend.connect_tcp(host, port, within, local_address, socket_options)
        return _DeadlineStream(stream)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        within = _within(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._backend.connect_unix_socket(path, within, socket_options))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


def deadline_bound(transport: object) -> bool:
    """Give `transport`'s connection pool (httpx keeps it as `_pool`) the deadline backend;
    False for a transport without one (tests/reconcile_app/sources/test_http_answer_bounds.py
    fails if httpx ever moves it: calls would no longer be bounded)."""
    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if not isinstance(backend, httpcore.NetworkBackend):
        return False
    if not isinstance(backend, DeadlineBackend):
        pool._network_backend = DeadlineBackend(backend)  # type: ignore[union-attr]
    return True
