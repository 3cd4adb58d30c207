from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from reconcile_app.limits import json_unstorable


class SafeJSONParser(JSONParser):
    """JSON parsing that refuses what the stores cannot keep faithfully, with a 400.

    Pathological nesting would crash the decoder; a NUL character cannot be stored in
    PostgreSQL's jsonb, so accepting it would be a 500 on one database and not the other; a
    lone surrogate ("\\ud800") decodes to a string that no encoder, renderer or database
    driver accepts, so it would fail wherever it went next.
    """

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError as exc:
            raise ParseError("JSON parse error - nested too deeply") from exc
        if (problem := json_unstorable(data)) is not None:
            raise ParseError(problem)
        return data
