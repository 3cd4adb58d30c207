"""Messages for the page, sent with an htmx answer in `HX-Trigger` (the page is not reloaded,
so a Django message would only show on the next page). static/reconcile/messages.js shows
them; this is the one place that writes what it reads."""

from __future__ import annotations

import json
from typing import Any

MESSAGE_EVENT = "console-message"


def console_message(
    level: str, text: str, *, key: str = "", until_success: bool = False, ref: str = ""
) -> dict[str, Any]:
    """The event's detail. A `key` makes it a state the page holds once (the same message
    again is not repeated, another of the key replaces it); `until_success` takes it away at
    the next request that succeeds; `ref` (a request id) is shown beside the text."""
    message: dict[str, Any] = {"level": level, "text": text}
    if key:
        message["key"] = key
    if until_success:
        message["until_success"] = True
    if ref:
        message["ref"] = ref
    return message


def hx_trigger(*events: str, message: dict[str, Any] | None = None) -> str:
    """An `HX-Trigger` header's value: each event for the page's listeners, and `message`
    (a `console_message`) for the page to say."""
    fired: dict[str, Any] = dict.fromkeys(events, "")
    if message is not None:
        fired[MESSAGE_EVENT] = message
    return json.dumps(fired)
