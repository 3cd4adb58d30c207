"""What an owner call leaves in the process's log: nothing about the customer it was about.

httpx logs every request at INFO with its URL (`HTTP Request: GET .../records/customer-9001/
payout_iban "HTTP/1.1 200 OK"`). Under the default level that put one line per field read, per
commit and per ledger look-up into the log store, naming the customer and the personal field
read, where every reader of the logs sees it. The snapshot, the effect's timeline and the
owner's own logs already keep who read what, scoped to who may see it; the log keeps nothing
an operator needs from those lines (a failed call is the read's `unavailable` with its detail).
"""

from __future__ import annotations

import json

import pytest
from django.utils import timezone

from config.logs import logging_settings
from reconcile_app.choices import ReadStatus
from reconcile_app.models import Source
from reconcile_app.sources import EffectCommand
from reconcile_app.sources.http import HttpAdapter
from reconcile_app.sources.owner_client import owner_client_reset
from tests.test_logs import written  # noqa: F401 - a fixture: what the console handler writes

CUSTOMER = "customer-9001"
IBAN = "GB33BUKB20201555555555"


@pytest.fixture(autouse=True)
def fresh_owner_client() -> None:
    """A client made under the logging configured now, not one a test before kept."""
    owner_client_reset()


def adapter(url: str) -> HttpAdapter:
    return HttpAdapter(Source(name="crm", adapter="http", base_url=url, options={}))


def test_owner_calls_write_no_line_naming_the_customer_or_the_field(stub_owner, written):
    now = timezone.now().isoformat()
    stub_owner.body = {"value": IBAN, "version": 3, "valid_from": now, "recorded_at": now,
                       "observed_at": now}  # fmt: skip
    owner = adapter(stub_owner.url)

    assert owner.read(CUSTOMER, "payout_iban").status == ReadStatus.OK
    owner.apply(
        EffectCommand(
            idempotency_key="pay-9001-a",
            subject=CUSTOMER,
            field="payout_iban",
            action="change_iban",
            expected_version=3,
            resulting_value=IBAN,
        )
    )
    owner.lookup_effect("pay-9001-a")
    stub_owner.status = 500
    assert owner.read(CUSTOMER, "payout_iban").status == ReadStatus.UNAVAILABLE

    assert len(stub_owner.requests) == 4  # every call was made
    lines = [json.loads(text) for text in written.getvalue().splitlines()]
    about_the_customer = [
        entry for entry in lines if CUSTOMER in entry["message"] or IBAN in entry["message"]
    ]
    assert about_the_customer == []


@pytest.mark.parametrize(
    ("level", "httpx_level"), [("INFO", "WARNING"), ("warning", "WARNING"), ("ERROR", "ERROR")]
)
def test_httpx_says_nothing_below_warning_at_the_usual_levels(level, httpx_level):
    loggers = logging_settings(log_format="json", level=level)["loggers"]
    assert loggers["httpx"]["level"] == httpx_level


@pytest.mark.parametrize("level", ["DEBUG", "NOTSET"])
def test_someone_debugging_owner_calls_sees_httpxs_lines(level):
    # Asked for everything (a connection to an owner being debugged): httpx's too.
    loggers = logging_settings(log_format="json", level=level)["loggers"]
    assert "httpx" not in loggers
