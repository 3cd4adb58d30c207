"""Django's `{# … #}` comment ends at the line's end: one spread over lines is sent as text.
The console's top bar showed two such comments, word for word, on every page."""

from __future__ import annotations

import re
from pathlib import Path

from django.conf import settings

TEMPLATES = Path(settings.BASE_DIR) / "templates"
UNCLOSED_ON_ITS_LINE = re.compile(r"\{#(?:(?!#\}).)*$", re.MULTILINE)


def test_no_template_spreads_a_short_comment_over_lines():
    spread = [
        f"{path.relative_to(TEMPLATES)}:{text.count(chr(10), 0, match.start()) + 1}"
        for path in sorted(TEMPLATES.rglob("*.html"))
        for text in [path.read_text()]
        for match in UNCLOSED_ON_ITS_LINE.finditer(text)
    ]
    assert spread == [], "use {% comment %} … {% endcomment %} for comments over lines"


def test_a_console_page_shows_no_comment(operator):
    from django.test import Client

    client = Client()
    client.force_login(operator.user)
    page = client.get("/").content.decode()
    assert "{#" not in page and "#}" not in page
