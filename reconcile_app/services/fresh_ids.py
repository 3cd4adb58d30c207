"""Identifiers of new records: the caller's own when free, else made up by the product."""

from __future__ import annotations

from secrets import token_hex

from django.db import models

from reconcile_app.errors import Conflict


def fresh_candidate(prefix: str) -> str:
    """`prefix` and 48 random bits: a new id, until the table is asked whether it is held."""
    return f"{prefix}{token_hex(6)}"


def fresh_id(model: type[models.Model], field: str, prefix: str) -> str:
    """`prefix` and 48 random bits, not yet held in `model.field`. A clash (one draw in about
    28 million once ten million records are held) draws again: an id nobody chose is never
    refused as taken."""
    while True:
        candidate = fresh_candidate(prefix)
        if not model._default_manager.filter(**{field: candidate}).exists():
            return candidate


def new_record_id(
    model: type[models.Model],
    field: str,
    prefix: str,
    chosen: str | None,
    *,
    noun: str,
    taken_code: str,
) -> str:
    """The id a new record is kept under. A caller's own id (`chosen`) is kept as given or
    refused with 409 `taken_code` when it is held, since the caller means that record; without
    one, a fresh id is drawn. Call it inside the transaction that inserts the record."""
    if not chosen:
        return fresh_id(model, field, prefix)
    if model._default_manager.filter(**{field: chosen}).exists():
        raise Conflict(f"{noun} {chosen} already exists", code=taken_code)
    return chosen
