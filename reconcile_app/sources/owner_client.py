"""The connections the `http` adapter's owner calls travel on: one client per process.

A client made for each call paid a TCP connect for every read, authority question, commit
and ledger lookup, and to an `https` owner a TLS handshake as well (`manage.py bench owner`
measures both ways). The process's one client keeps its connections to each owner open
between calls (httpx pools them per origin, under a lock, so threads may share it): only the
first call to an owner, or one after an idle gap, connects. A reconcile's reads and event
fetches of several owners leave at once, on the process's few threads for owner calls
(owner_asks_at_once).

What a call must not inherit from the calls before it, it does not: the bearer token, the
timeout and the base URL travel with each request, and the client keeps no cookies, so an
owner's session can never carry one source's identity into another's calls.
"""

from __future__ import annotations

import contextvars
import logging
import os
import ssl
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from functools import cache, partial
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any, Generic, TypeVar, cast

import httpx
from django.conf import settings

from reconcile_app.choices import ReadStatus
from reconcile_app.sources import (
    EventsAsked,
    EventsResult,
    ReadAsked,
    ReadResult,
    events_failing_closed,
    read_failing_closed,
)
from reconcile_app.sources.owner_deadline import deadline_bound, owner_call_deadline

T = TypeVar("T")

logger = logging.getLogger(__name__)


@cache
def tls_context() -> ssl.SSLContext:
    """The trust store every owner call verifies against, built once per process.

    httpx builds one for every client it makes, loading the whole CA bundle: tens of
    milliseconds of CPU on this project's machines, against a tenth of a millisecond for a
    client given this one. A context is safe to share between threads. It is what httpx
    would build (`SSL_CERT_FILE` or `SSL_CERT_DIR` when set, else certifi's bundle), read
    when the process's client is made.
    """
    return httpx.create_ssl_context()


def _no_cookies() -> CookieJar:
    """A jar that refuses every cookie: no domain is allowed to set or receive one."""
    return CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))


def _limits() -> httpx.Limits:
    """A connection idle for RECONCILE_HTTP_KEEPALIVE_SECONDS is not used again (httpx
    closes it at the process's next owner call). That must be shorter than the owners' own
    idle timeout: a request sent on a connection the owner is closing at that moment fails,
    and a commit that fails so is `unknown` until the owner's ledger answers (owner_request
    asks a GET again). 0 keeps no connection: every call connects anew."""
    keepalive = settings.RECONCILE_HTTP_KEEPALIVE_SECONDS
    if keepalive <= 0:
        return httpx.Limits(max_keepalive_connections=0, keepalive_expiry=0)
    return httpx.Limits(keepalive_expiry=keepalive)


# Owner calls one reconcile may have in flight at once: its contract's fields rarely number
# more, and each thread waits on the network, not the CPU.
CALLS_AT_ONCE = 8


class _PerProcess(Generic[T]):
    """One `make()` per process, made at its first use.

    A process forked from one that used it (a Celery pool process, a gunicorn worker of a
    preloaded app) makes its own: a client must not write on its parent's sockets, and a
    pool's threads do not come with a fork. The fork handler below forgets the parent's, and
    the process id is checked again at each use.
    """

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._lock = threading.Lock()
        self._kept: tuple[int, T] | None = None

    def get(self) -> T:
        kept = self._kept
        if kept is not None and kept[0] == os.getpid():
            return kept[1]
        with self._lock:
            if self._kept is None or self._kept[0] != os.getpid():
                self._kept = (os.getpid(), self._make())
            return self._kept[1]

    def forget(self) -> T | None:
        """Drop this process's one (made again at the next use) and hand it over, or None."""
        with self._lock:
            kept, self._kept = self._kept, None
        return kept[1] if kept is not None and kept[0] == os.getpid() else None

    def forget_in_child(self) -> None:
        # A fork can happen while another thread holds the lock: the child must not inherit
        # it. The parent's object is dropped, not closed: its sockets are the parent's.
        self._lock = threading.Lock()
        self._kept = None


def _new_client() -> httpx.Client:
    client = httpx.Client(
        verify=tls_context(),
        limits=_limits(),
        cookies=_no_cookies(),
        headers={"Accept": "application/json"},
    )
    # Every transport it may use (a proxy's too, from the environment) is held to each
    # call's one deadline (owner_deadline): the headers as well as the body.
    for transport in (client._transport, *client._mounts.values()):
        deadline_bound(transport)
    return client


_owner_thread = threading.local()


def _mark() -> None:
    _owner_thread.marked = True


_client: _PerProcess[httpx.Client] = _PerProcess(_new_client)
_pool: _PerProcess[ThreadPoolExecutor] = _PerProcess(
    lambda: ThreadPoolExecutor(CALLS_AT_ONCE, thread_name_prefix="owner-call", initializer=_mark)
)


def owner_client() -> httpx.Client:
    """This process's client for owner calls, made at its first call."""
    return _client.get()


def owner_client_problem() -> str | None:
    """Why this process cannot make its client for owner calls, or None when it has one.

    httpx reads the proxy variables (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY) when the client is
    made, and refuses one it cannot use: a `socks5://` proxy without the socksio package, a
    scheme it does not know, a malformed URL. That raised out of every owner call, past the
    adapter's own failures: a commit answered 500 and left its effect `sent`. The message
    goes to the log (it may name the proxy), the caller's detail only says where to look.
    """
    try:
        owner_client()
    except (ImportError, ValueError, httpx.InvalidURL) as exc:
        logger.error("the client for owner calls cannot be made: %s", exc)
        return f"the client for owner calls cannot be made ({type(exc).__name__}; see the log)"
    return None


def owner_client_reset(trust_store: bool = False) -> None:
    """Close this process's client and its connections; the next owner call makes a new one
    with the settings of that moment, and with `trust_store`, a trust store read anew (after
    a test or a benchmark changes them)."""
    if (client := _client.forget()) is not None:
        client.close()
    if trust_store:
        tls_context.cache_clear()


def owner_calls_at_once(
    calls: list[Callable[[], T]], *, within: float, late: Callable[[int], T]
) -> list[T]:
    """Each call on its own thread of the process's pool, their answers in order: owner
    calls wait on the network, so a reconcile reading several owners waits for the slowest
    rather than for the sum. Each call runs in a copy of the caller's context, so its log
    lines carry the request's id and principal.

    A call still running after `within` seconds is answered by `late(its index)`; it runs
    on until its own timeouts end it. A call that raised raises here, once every call has
    ended or `within` has passed. On one of the pool's own threads the calls run there, in
    order: a full pool waiting on itself would never finish.
    """
    if getattr(_owner_thread, "marked", False):
        return [call() for call in calls]
    pool = _pool.get()
    futures = [pool.submit(contextvars.copy_context().run, call) for call in calls]
    done, _ = wait(futures, timeout=within)
    return [f.result() if f in done else late(i) for i, f in enumerate(futures)]


def owner_asks_at_once(
    reads: list[ReadAsked], events: list[EventsAsked]
) -> tuple[list[ReadResult], list[EventsResult]]:
    """Reads and event fetches of `http` owners, every one in flight at once
    (owner_calls_at_once): a reconcile waits for the slowest owner, not for the sum, and
    never past twice the longest timeout (a dropped GET is asked twice)."""
    asked = [adapter for adapter, _, _ in (*reads, *events)]
    within = 2 * max(owner_timeout((a.source.options or {}).get("timeout_ms")) for a in asked) + 1
    late = f"no answer in {within:g} s"
    answers = owner_calls_at_once(
        [
            *(partial(read_failing_closed, *read) for read in reads),
            *(partial(events_failing_closed, *fetch) for fetch in events),
        ],
        within=within,
        late=lambda index: (
            ReadResult.failed(ReadStatus.TIMEOUT, late)
            if index < len(reads)
            else EventsResult(status=ReadStatus.TIMEOUT, detail=late)
        ),
    )
    return (
        cast(list[ReadResult], answers[: len(reads)]),
        cast(list[EventsResult], answers[len(reads) :]),
    )


def owner_timeout_ms_most() -> int:
    """The longest timeout a source may set. A resolution asks its owner up to four times (the
    ledger, then the target; a dropped GET is asked twice), and the readback and resolution
    tasks are cut short at RECONCILE_OWNER_TASK_SOFT_TIME_LIMIT: a fifth of it is left over."""
    return settings.RECONCILE_OWNER_TASK_SOFT_TIME_LIMIT * 1000 // 5


def owner_timeout(timeout_ms: object) -> float:
    """A source's `timeout_ms` in seconds, else the deployment's RECONCILE_HTTP_TIMEOUT_MS
    (also for a row that holds no positive number: source files are refused with one)."""
    if (
        isinstance(timeout_ms, int | float)
        and not isinstance(timeout_ms, bool)
        and 0 < timeout_ms < float("inf")
    ):
        return float(timeout_ms) / 1000.0
    return float(settings.RECONCILE_HTTP_TIMEOUT_SECONDS)


class CredentialsInBaseURL(httpx.InvalidURL):
    """A `base_url` with a user or password in it (`https://user:secret@owner/`)."""


def owner_base(base_url: str) -> httpx.URL:
    """A source's `base_url` as the directory its paths go under, as httpx made a client's
    base URL: its path ends with a slash. Raises httpx.InvalidURL for one that is no URL, and
    CredentialsInBaseURL for one that carries credentials: a source file is configuration,
    not a secret (the token's place is `auth_token_env`), and httpx writes each request's URL,
    password and all, to its INFO log line and sends it as Basic auth in place of the token."""
    base = httpx.URL(base_url if base_url.endswith("/") else base_url + "/")
    if base.userinfo:
        # The message never repeats the URL: it is shown to agents in a read's detail.
        raise CredentialsInBaseURL(
            "`base_url` carries credentials (user:password@); name an environment variable "
            "holding the owner's token in `auth_token_env` instead"
        )
    if base.query:
        # Paths are added to the end of the URL: after a `?`, every call (reads, commits,
        # ledger look-ups) would go to the same path, its own only in the query. (A fragment
        # is never sent: the paths go before it.)
        raise httpx.InvalidURL("`base_url` may not have a query (?...)")
    if base.raw_path.endswith(b"/"):
        return base
    return base.copy_with(raw_path=base.raw_path + b"/")


def owner_url(base: httpx.URL, path: str) -> httpx.URL:
    """`path` (relative, already quoted) under `base` (owner_base), as httpx joined them."""
    return base.copy_with(raw_path=base.raw_path + httpx.URL(path).raw_path)


# The owner closed the connection without an answer, or reset it: on a kept connection, most
# often one it was closing as the request left (timeouts are not among these).
_DROPPED = (httpx.RemoteProtocolError, httpx.ReadError)


# The most an owner's answer may hold: records, receipts and events are small, and an answer
# is read whole into memory.
OWNER_ANSWER_BYTES_MOST = 8 * 1024 * 1024


class OwnerAnswerTooLarge(httpx.DecodingError):
    """The owner's answer was larger than OWNER_ANSWER_BYTES_MOST (nothing of it is used)."""


def _answer_read(method: str, url: httpx.URL, *, timeout: float, **kwargs: Any) -> httpx.Response:
    """One request, connected, sent and its answer read whole within `timeout` seconds, and
    at most OWNER_ANSWER_BYTES_MOST long. httpx's own timeout is per read of the socket: an
    owner trickling a byte every second, of its headers or of its body, would hold the call
    (and the web worker) for as long as it liked (owner_deadline), and one sending gigabytes
    would be read into memory."""
    with (
        owner_call_deadline(timeout) as deadline,
        owner_client().stream(method, url, timeout=timeout, **kwargs) as response,
    ):
        body = bytearray()
        for chunk in response.iter_bytes():  # decoded: a compressed bomb is bounded too
            body += chunk
            if len(body) > OWNER_ANSWER_BYTES_MOST:
                raise OwnerAnswerTooLarge(
                    f"the owner's answer is over {OWNER_ANSWER_BYTES_MOST} bytes",
                    request=response.request,
                )
            if time.monotonic() > deadline:
                raise httpx.ReadTimeout(
                    f"the owner's answer took over {timeout:g} s to arrive",
                    request=response.request,
                )
        # What read() would have kept: the answer's content, for .json() and .text.
        response._content = bytes(body)
    return response


def owner_request(method: str, url: httpx.URL, **kwargs: Any) -> httpx.Response:
    """One request on the process's client (its answer bounded in time and size:
    `_answer_read`). A GET the owner dropped is asked once more, on another connection: it
    changes nothing, and a kept connection the owner was closing must not fail a read. A
    POST is never sent twice: its failure is the caller's to judge (for a commit, `unknown`
    until the owner's ledger answers)."""
    try:
        return _answer_read(method, url, **kwargs)
    except _DROPPED:
        if method != "GET":
            raise
    return _answer_read(method, url, **kwargs)


def _forget_after_fork() -> None:
    _client.forget_in_child()
    _pool.forget_in_child()


os.register_at_fork(after_in_child=_forget_after_fork)
