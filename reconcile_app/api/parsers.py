from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


def _contains_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_contains_nul(key) or _contains_nul(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_contains_nul(item) for item in value)
    return False


class SafeJSONParser(JSONParser):
    """JSON parsing that refuses what the stores cannot keep faithfully, with a 400.

    Pathological nesting would crash the decoder; a NUL character cannot be stored in
    PostgreSQL's jsonb, so accepting it would be a 500 on one database and not the other.
    """

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError as exc:
            raise ParseError("JSON parse error - nested too deeply") from exc
        try:
            has_nul = _contains_nul(data)
        except RecursionError as exc:
            raise ParseError("JSON parse error - nested too deeply") from exc
        if has_nul:
            raise ParseError("JSON strings may not contain the NUL character (\\u0000)")
        return data
