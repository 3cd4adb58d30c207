"""Serializer fields that take input exactly as typed: no coercion, limits enforced.

DRF's CharField turns `0` into `"0"` and `true` into `"True"`: a fuzzer's
`{"evidence_id": "ev-001", "reason": 0}` once created a correction whose reason was "0".
Text that justifies an action must be text, so these fields refuse anything but a string.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.fields import empty

from reconcile_app.errors import ValidationFailed
from reconcile_app.limits import (
    MAX_IDENTIFIER_LENGTH,
    MAX_REASON_CHARACTERS,
    MAX_VALUE_BYTES,
    identifier_check,
    says_nothing,
    value_check,
)


class Text(serializers.CharField):
    """A string, as sent. Blank only where `allow_blank` says so; surrounding space trimmed."""

    default_error_messages = {"not_text": "must be a string"}

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("not_text")
        return super().to_internal_value(data)  # type: ignore[no-any-return]


class Justification(Text):
    """Why a person or agent does something (reason, rationale, note): required, non-empty.

    Missing, null, blank or only invisible characters (`limits.says_nothing`) is the
    service's own refusal, `<field>_required` (400 `reason_required`, `rationale_required`,
    `note_required`), as the operations declare it: DRF's generic `invalid_request` came
    first and hid it.
    """

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("max_length", MAX_REASON_CHARACTERS)
        kwargs["allow_blank"] = False
        super().__init__(**kwargs)

    def run_validation(self, data: Any = empty) -> Any:
        if data is empty or data is None or (isinstance(data, str) and says_nothing(data)):
            name = self.field_name or "reason"
            raise ValidationFailed(
                f"{name} is required: say why",
                code=f"{name}_required",
                errors={name: ["This field is required and may not be blank."]},
            )
        return super().run_validation(data)


class Identifier(Text):
    """A subject, field, fact key, source or memory class (docs/api.md "Input limits").

    A malformed one is a 400 `invalid_identifier`, not a generic validation error: the
    caller is told exactly which name broke which rule.
    """

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("max_length", MAX_IDENTIFIER_LENGTH)
        kwargs["trim_whitespace"] = False
        super().__init__(**kwargs)

    def run_validation(self, data: Any = empty) -> Any:
        # DRF refuses "" as "may not be blank" (400 `invalid_request`) before
        # to_internal_value: an identifier is 1-200 characters, and an empty one breaks that
        # rule as much as a long one does (API.md, "Input limits").
        if data == "" and not self.allow_blank:
            identifier_check(data, self.field_name or "identifier")
        return super().run_validation(data)

    def to_internal_value(self, data: Any) -> str:
        if data == "" and self.allow_blank:
            return ""
        return identifier_check(data, self.field_name or "identifier")


@extend_schema_field(
    {
        "description": "any JSON value, up to 64 KiB as JSON (else 422 `value_too_large`)",
        "x-max-json-bytes": MAX_VALUE_BYTES,
    }
)
class Value(serializers.JSONField):
    """Any JSON value, up to 64 KiB as JSON (else 422 `value_too_large`)."""

    def to_internal_value(self, data: Any) -> Any:
        return value_check(super().to_internal_value(data), self.field_name or "value")


@extend_schema_field(
    {
        "type": "array",
        "items": {"type": "string", "maxLength": 200},
        "minItems": 1,
        "maxItems": 100,
    }
)
class NonEmptyRefs(serializers.ListField):
    """A list the service requires non-empty with a code of its own (`derivation_missing`):
    the schema says non-empty, the serializer lets the service refuse it."""
