"""A hundred ticked rows of client-made keys do not fit in a URL (gunicorn refuses a request
line past 4094 bytes with 414): the list's bar then posts its preview (static bulk.js), which
the preview answers as it answers a GET, and which changes nothing until it is confirmed."""

from __future__ import annotations

import re

from reconcile_app.models import BulkJob
from tests.reconcile_app.console.test_bulk import PREVIEW, REASON, fingerprint_of, three  # noqa: F401


def test_a_posted_preview_shows_the_ticked_rows_and_starts_nothing(three, operator_browser):
    ticked = {"do": "readback", "scope": "selected", "key": three, "preview": "1"}

    preview = operator_browser.post(PREVIEW, ticked)

    page = preview.content.decode()
    assert preview.status_code == 200
    assert '<span class="count" id="bulk-count">3</span>' in page
    assert not BulkJob.objects.exists()
    # Its confirmation names the rows, not the posted marker: confirming is a plain post.
    hidden = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', page))
    assert "preview" not in hidden and hidden["scope"] == "selected"
    confirmed = operator_browser.post(
        PREVIEW,
        {"do": "readback", "scope": "selected", "key": three, "reason": REASON}
        | fingerprint_of(page),
    )
    assert confirmed.status_code == 302
    assert BulkJob.objects.get().count == 3


def test_a_nul_in_a_posted_key_is_refused_not_a_server_error(three, operator_browser):
    # The posted preview reads its keys from the form as they came; PostgreSQL refuses a NUL
    # in any text it compares (a 500), and no idempotency key holds one.
    ticked = {"do": "readback", "scope": "selected", "key": [*three, "k\x00ey"], "preview": "1"}

    preview = operator_browser.post(PREVIEW, ticked)

    assert preview.status_code == 400
    assert "a key holds a NUL character" in preview.content.decode()
    assert not BulkJob.objects.exists()
