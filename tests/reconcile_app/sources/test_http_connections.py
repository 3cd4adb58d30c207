"""The `http` adapter's owner calls share the process's kept connections, and nothing else.

A client per call paid a TCP connect (and to an https owner a TLS handshake) for every read,
commit and lookup; the process's one client keeps the connection. What must not be shared
between calls is shown here too: the token, cookies, and a forked child's sockets.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from typing import ClassVar

import pytest
import trustme
from django.utils import timezone

from config.logs import request_id_var
from reconcile_app.choices import ReadStatus
from reconcile_app.models import Source
from reconcile_app.sources import ApplyOutcome, EffectCommand, ReadResult
from reconcile_app.sources.http import HttpAdapter
from reconcile_app.sources.owner_client import (
    owner_calls_at_once,
    owner_client_reset,
    owner_timeout,
)
from tests.reconcile_app.sources.conftest import StubOwner

TOKEN_ENV = "RECONCILE_SOURCE_TOKEN_CONNECTIONS"


def record() -> dict:
    now = timezone.now().isoformat()
    return {"value": "collect", "version": 3, "valid_from": now, "recorded_at": now,
            "observed_at": now}  # fmt: skip


def adapter(url: str, **options: object) -> HttpAdapter:
    return HttpAdapter(Source(name="ledger", adapter="http", base_url=url, options=options))


def command(key: str) -> EffectCommand:
    return EffectCommand(
        idempotency_key=key,
        subject="acct-1",
        field="status",
        action="set",
        expected_version=3,
        resulting_value="released",
    )


@pytest.fixture(autouse=True)
def _kept_long_enough(settings):
    """Connections kept longer than any pause a loaded machine puts between two calls."""
    settings.RECONCILE_HTTP_KEEPALIVE_SECONDS = 30
    owner_client_reset()


def test_calls_to_an_owner_share_one_kept_connection(stub_owner):
    stub_owner.body = record()
    owner = adapter(stub_owner.url)

    results = [owner.read("acct-1", "status") for _ in range(5)]

    assert [r.status for r in results] == [ReadStatus.OK] * 5
    assert len(stub_owner.requests) == 5
    assert stub_owner.connections == 1


def test_with_keep_alive_off_every_call_connects(stub_owner, settings):
    settings.RECONCILE_HTTP_KEEPALIVE_SECONDS = 0
    owner_client_reset()
    stub_owner.body = record()
    owner = adapter(stub_owner.url)

    for _ in range(3):
        assert owner.read("acct-1", "status").status == ReadStatus.OK

    assert stub_owner.connections == 3


def test_each_call_carries_its_own_sources_token_on_the_shared_connection(stub_owner, monkeypatch):
    monkeypatch.setenv(TOKEN_ENV, "first-token")
    stub_owner.body = record()
    with_token = adapter(stub_owner.url, auth_token_env=TOKEN_ENV)
    without_token = adapter(stub_owner.url)

    with_token.read("acct-1", "status")
    without_token.read("acct-1", "status")
    monkeypatch.setenv(TOKEN_ENV, "rotated-token")
    with_token.read("acct-1", "status")

    sent = [r.headers.get("Authorization") for r in stub_owner.requests]
    assert sent == ["Bearer first-token", None, "Bearer rotated-token"]
    assert stub_owner.connections == 1


def test_an_owners_cookie_is_never_sent_back(stub_owner):
    # A session cookie set for one source's calls must not identify the next caller.
    stub_owner.body = record()
    stub_owner.extra_headers = {"Set-Cookie": "session=first-caller; Path=/"}
    owner = adapter(stub_owner.url)

    owner.read("acct-1", "status")
    owner.read("acct-2", "status")

    assert [r.headers.get("Cookie") for r in stub_owner.requests] == [None, None]


def test_a_forked_child_connects_for_itself_and_leaves_its_parents_connection_alone(
    stub_owner,
):
    stub_owner.body = record()
    owner = adapter(stub_owner.url)
    assert owner.read("acct-1", "status").status == ReadStatus.OK

    child = os.fork()
    if child == 0:  # the child: its calls, then out, whatever happens, without pytest's teardown
        code = 1
        try:
            signal.alarm(10)  # the parent's pool threads did not come with the fork
            reads = HttpAdapter.read_batch([(owner, "acct-2", "status"), (owner, "acct-2", "x")])
            code = 0 if [r.status for r in reads] == [ReadStatus.OK] * 2 else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(child, 0)

    assert os.waitstatus_to_exitcode(status) == 0
    assert owner.read("acct-3", "status").status == ReadStatus.OK
    # The parent's one connection, still in use after the fork, and the child's (two reads
    # at once: one or two connections).
    assert stub_owner.connections in (2, 3)
    assert sorted(r.path.rsplit("/", 2)[1] for r in stub_owner.requests) == [
        "acct-1", "acct-2", "acct-2", "acct-3"
    ]  # fmt: skip
    assert stub_owner.requests[-1].path.endswith("/acct-3/status")


def test_a_read_the_owner_dropped_is_asked_once_more(stub_owner):
    # The owner closing a kept connection as the request left: a read must not fail for it.
    stub_owner.body = record()
    stub_owner.drop_next = 1

    read = adapter(stub_owner.url).read("acct-1", "status")

    assert (read.status, read.value) == (ReadStatus.OK, "collect")
    assert len(stub_owner.requests) == 2


def test_a_commit_the_owner_dropped_is_never_sent_twice(stub_owner):
    # It may have executed before the owner dropped it: unknown, for the ledger to settle.
    stub_owner.drop_next = 1

    applied = adapter(stub_owner.url).apply(command("k-dropped"))

    assert applied.outcome == ApplyOutcome.UNKNOWN
    assert [r.method for r in stub_owner.requests] == ["POST"]


def test_the_base_url_is_joined_as_before(stub_owner):
    # No trailing slash, and a fragment (never sent), as a source file may hold them.
    stub_owner.body = record()

    adapter(stub_owner.url + "owner/api#section").read("acct-1", "status")

    assert [r.path for r in stub_owner.requests] == ["/owner/api/records/acct-1/status"]


def test_a_base_url_that_is_no_url_sends_nothing_and_fails_closed():
    owner = adapter("http://[::1/")  # passes the file's scheme check, parses as no URL

    read = owner.read("acct-1", "status")
    applied = owner.apply(command("k-no-url"))

    assert read.status == ReadStatus.UNAVAILABLE and "nothing was sent" in read.detail
    assert (applied.outcome, applied.code) == (ApplyOutcome.REJECTED, "owner_unavailable")


@pytest.fixture
def certificate_authority() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def tls_owner(certificate_authority, tmp_path, monkeypatch) -> Iterator[StubOwner]:
    """An owner over TLS whose certificate only the trust store in SSL_CERT_FILE vouches for."""
    owner = StubOwner(tls=certificate_authority.issue_cert("127.0.0.1"))
    bundle = tmp_path / "owner-ca.pem"
    certificate_authority.cert_pem.write_to_path(str(bundle))
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    owner_client_reset(trust_store=True)
    try:
        yield owner
    finally:
        owner.close()
        owner_client_reset(trust_store=True)


def test_an_https_owner_is_verified_and_its_connection_kept(tls_owner):
    tls_owner.body = record()
    tls_owner.post_body = {
        "idempotency_key": "k-1",
        "subject": "acct-1",
        "field": "status",
        "resulting_version": 4,
    }
    owner = adapter(tls_owner.url)

    read = owner.read("acct-1", "status")
    applied = owner.apply(command("k-1"))

    assert (read.status, read.value) == (ReadStatus.OK, "collect")
    assert applied.outcome == ApplyOutcome.ACCEPTED
    assert tls_owner.connections == 1


def test_an_https_owner_the_trust_store_does_not_vouch_for_is_unavailable(
    certificate_authority, monkeypatch
):
    owner_system = StubOwner(tls=trustme.CA().issue_cert("127.0.0.1"))  # another CA's
    bundle_ca = certificate_authority
    try:
        with bundle_ca.cert_pem.tempfile() as bundle:
            monkeypatch.setenv("SSL_CERT_FILE", bundle)
            owner_client_reset(trust_store=True)
            read = adapter(owner_system.url).read("acct-1", "status")
    finally:
        owner_system.close()
        owner_client_reset(trust_store=True)

    assert read.status == ReadStatus.UNAVAILABLE
    assert "CERTIFICATE_VERIFY_FAILED" in read.detail
    assert owner_system.requests == []


@pytest.fixture
def three_owners() -> Iterator[list[StubOwner]]:
    owners = [StubOwner() for _ in range(3)]
    try:
        yield owners
    finally:
        for each in owners:
            each.close()


def test_a_reconciles_reads_of_several_owners_are_in_flight_at_once(three_owners):
    # Each owner answers only once all three reads have arrived: read one after another,
    # the first would wait for the others until the barrier broke.
    everyone_asked = threading.Barrier(3, timeout=5)
    for number, each in enumerate(three_owners):
        each.body = {**record(), "value": f"owner-{number}"}
        each.before_answer = everyone_asked.wait

    reads = HttpAdapter.read_batch(
        [(adapter(each.url, timeout_ms=10_000), "acct-1", "status") for each in three_owners]
    )

    assert [(r.status, r.value) for r in reads] == [
        (ReadStatus.OK, "owner-0"), (ReadStatus.OK, "owner-1"), (ReadStatus.OK, "owner-2")
    ]  # fmt: skip


def test_a_batchs_reads_keep_the_requests_context(monkeypatch):
    # Their log lines name the request and the principal that made the owner calls.
    def read(self: HttpAdapter, subject: str, field: str) -> ReadResult:
        return ReadResult.failed(ReadStatus.UNAVAILABLE, request_id_var.get())

    monkeypatch.setattr(HttpAdapter, "read", read)
    token = request_id_var.set("req-owner-call")
    try:
        reads = HttpAdapter.read_batch([(adapter("http://owner/"), "acct-1", f) for f in "ab"])
    finally:
        request_id_var.reset(token)

    assert [r.detail for r in reads] == ["req-owner-call"] * 2


def test_a_read_that_raises_fails_closed_alone_and_no_owner_is_asked_twice(monkeypatch):
    asked: list[str] = []

    def read(self: HttpAdapter, subject: str, field: str) -> ReadResult:
        asked.append(field)
        if field == "broken":
            raise OverflowError("an owner's answer no adapter expected")
        return ReadResult(status=ReadStatus.OK, value=field, version=1)

    monkeypatch.setattr(HttpAdapter, "read", read)
    owner = adapter("http://owner/")

    reads = HttpAdapter.read_batch([(owner, "acct-1", f) for f in ("a", "broken", "c")])

    assert [(r.status, r.value) for r in reads] == [
        (ReadStatus.OK, "a"), (ReadStatus.UNAVAILABLE, None), (ReadStatus.OK, "c")
    ]  # fmt: skip
    assert reads[1].detail == "adapter error: OverflowError"
    assert sorted(asked) == ["a", "broken", "c"]


def test_a_batch_waits_no_longer_than_twice_its_longest_timeout(monkeypatch):
    # A read stuck past its own timeouts (an owner dribbling its answer) is answered late.
    release = threading.Event()

    def read(self: HttpAdapter, subject: str, field: str) -> ReadResult:
        if field == "stuck":
            release.wait(10)
        return ReadResult(status=ReadStatus.OK, value=field, version=1)

    monkeypatch.setattr(HttpAdapter, "read", read)
    owner = adapter("http://owner/", timeout_ms=200)  # within 2 x 0.2 + 1 s
    started = time.monotonic()
    try:
        reads = HttpAdapter.read_batch([(owner, "acct-1", "stuck"), (owner, "acct-1", "ok")])
    finally:
        release.set()

    assert time.monotonic() - started < 5
    assert [r.status for r in reads] == [ReadStatus.TIMEOUT, ReadStatus.OK]
    assert reads[0].detail == "no answer in 1.4 s"


def test_owner_calls_made_on_an_owner_thread_run_there_and_never_wait_on_the_pool():
    def nested() -> list[str]:
        return owner_calls_at_once(
            [lambda: threading.current_thread().name], within=5, late=lambda _: "late"
        )

    (names,) = owner_calls_at_once([nested], within=5, late=lambda _: ["late"])

    assert names[0].startswith("owner-call")


def test_a_call_on_an_owner_thread_keeps_the_requests_context():
    # Its log lines name the request and the principal that made the owner call.
    token = request_id_var.set("req-owner-call")
    try:
        seen = owner_calls_at_once(
            [request_id_var.get, lambda: threading.current_thread().name], within=5, late=str
        )
    finally:
        request_id_var.reset(token)

    assert seen[0] == "req-owner-call"
    assert seen[1].startswith("owner-call")


class _ReadsItsOwnWay(HttpAdapter):
    threads: ClassVar[list[str]] = []

    def read(self, subject: str, field: str) -> ReadResult:
        self.threads.append(threading.current_thread().name)
        return super().read(subject, field)


def test_a_subclass_with_its_own_read_is_read_in_order_on_the_callers_thread(stub_owner):
    _ReadsItsOwnWay.threads.clear()
    stub_owner.body = record()
    source = Source(name="ledger", adapter="http", base_url=stub_owner.url)

    reads = _ReadsItsOwnWay.read_batch([(_ReadsItsOwnWay(source), "acct-1", f) for f in "ab"])

    assert [r.status for r in reads] == [ReadStatus.OK] * 2
    assert _ReadsItsOwnWay.threads == [threading.current_thread().name] * 2


@pytest.mark.parametrize("junk", ["abc", True, 0, -5, float("nan"), None, [1000]])
def test_a_row_whose_timeout_is_no_positive_number_falls_back_to_the_deployments(junk, settings):
    # Rows loaded before source files were checked for it; a call must not raise on it.
    settings.RECONCILE_HTTP_TIMEOUT_SECONDS = 2.5

    assert owner_timeout(junk) == 2.5
    assert owner_timeout(750) == 0.75
