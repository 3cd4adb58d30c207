"""The sandbox keeps its authority history and answers `GET authority/{fact_key}?as_of=`."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.db import DatabaseError, connection, transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from reconcile_app.canonical import rfc3339
from reconcile_app.errors import NotFound
from reconcile_app.models.append_only import AppendOnlyViolation
from sandbox_app.models import SandboxAuthorityChange
from sandbox_app.services import (
    sandbox_authority_read,
    sandbox_authority_write,
    sandbox_fault_add,
)

REGISTRY = "eval-registry"
KEY = "baseline.math-eval"
AUTHORITY = f"/api/v1/sandbox/{REGISTRY}/authority/{KEY}"


def between(first: SandboxAuthorityChange, second: SandboxAuthorityChange) -> datetime:
    """A moment after the first change took effect and before the second did."""
    assert first.at < second.at
    return first.at + (second.at - first.at) / 2


@pytest.fixture
def handed_over(estate) -> tuple[SandboxAuthorityChange, SandboxAuthorityChange]:
    """The key was the registry's at r17, then handed to the eval team at r18."""
    sandbox_authority_write(
        source=REGISTRY, fact_key=KEY, owner="eval-registry", source_revision="registry@r17"
    )
    sandbox_authority_write(
        source=REGISTRY, fact_key=KEY, owner="eval-team", source_revision="registry@r18"
    )
    first, second = SandboxAuthorityChange.objects.filter(source=REGISTRY, fact_key=KEY)
    return first, second


def test_every_authority_write_is_kept_with_its_moment(handed_over):
    first, second = handed_over
    assert [(row.owner, row.source_revision) for row in handed_over] == [
        ("eval-registry", "registry@r17"),
        ("eval-team", "registry@r18"),
    ]
    assert first.at < second.at <= timezone.now()


def test_as_of_answers_the_authority_in_force_then(handed_over):
    first, second = handed_over
    before = sandbox_authority_read(source=REGISTRY, fact_key=KEY, as_of=between(first, second))
    assert (before.owner, before.source_revision, before.since) == (
        "eval-registry",
        "registry@r17",
        first.at,
    )
    at_the_change = sandbox_authority_read(source=REGISTRY, fact_key=KEY, as_of=second.at)
    assert at_the_change.owner == "eval-team"
    now = sandbox_authority_read(source=REGISTRY, fact_key=KEY)
    assert (now.owner, now.as_of) == ("eval-team", None)


def test_before_any_authority_there_was_none(handed_over):
    first, _ = handed_over
    with pytest.raises(NotFound) as refused:
        sandbox_authority_read(
            source=REGISTRY, fact_key=KEY, as_of=first.at - timedelta(microseconds=1)
        )
    assert refused.value.code == "authority_not_found"


def test_history_rows_are_never_rewritten(handed_over):
    first, _ = handed_over
    first.owner = "someone-else"
    with pytest.raises(AppendOnlyViolation):
        first.save()
    with pytest.raises(AppendOnlyViolation):
        SandboxAuthorityChange.objects.all().delete()
    assert SandboxAuthorityChange.objects.get(pk=first.pk).owner == "eval-registry"


@pytest.mark.skipif(connection.vendor != "postgresql", reason="triggers are PostgreSQL's")
@pytest.mark.django_db(transaction=True)
def test_postgresql_refuses_raw_sql_changes_to_the_history(estate):
    sandbox_authority_write(source=REGISTRY, fact_key=KEY, owner="o", source_revision="r1")
    table = SandboxAuthorityChange._meta.db_table
    for statement in (f"UPDATE {table} SET owner = 'x'", f"DELETE FROM {table}"):
        with (
            pytest.raises(DatabaseError, match="append-only"),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(statement)
    assert SandboxAuthorityChange.objects.get().owner == "o"


# --- Over HTTP (the owner contract) ---------------------------------------------------------


def test_the_as_of_form_echoes_the_question_and_says_since_when(handed_over, operator):
    first, second = handed_over
    asked = between(first, second)
    response = operator.get(AUTHORITY, as_of=rfc3339(asked))
    assert response.status_code == 200, response.content
    body = response.json()
    assert body == {
        "owner": "eval-registry",
        "source_revision": "registry@r17",
        "as_of": rfc3339(asked),
        "since": rfc3339(first.at),
    }


def test_an_offset_as_of_is_the_same_instant(handed_over, operator):
    first, second = handed_over
    asked = between(first, second).astimezone(timezone.get_fixed_timezone(-300))
    body = operator.get(AUTHORITY, as_of=asked.isoformat()).json()
    assert body["owner"] == "eval-registry"
    assert parse_datetime(body["as_of"]) == asked
    assert body["as_of"].endswith("Z")


def test_the_present_form_is_unchanged(handed_over, operator):
    response = operator.get(AUTHORITY)
    assert response.json() == {"owner": "eval-team", "source_revision": "registry@r18"}


def test_none_then_is_a_404_that_echoes_the_question(handed_over, operator):
    first, _ = handed_over
    asked = rfc3339(first.at - timedelta(seconds=1))
    response = operator.get(AUTHORITY, as_of=asked)
    assert response.status_code == 404
    assert response.json()["code"] == "authority_not_found"
    assert response.json()["as_of"] == asked


@pytest.mark.parametrize(
    ("as_of", "status", "code"),
    [
        ("last tuesday", 400, "invalid_parameter"),
        ("2026-13-01T00:00:00Z", 400, "invalid_parameter"),
        ("2999-01-01T00:00:00Z", 422, "as_of_in_future"),
    ],
)
def test_a_bad_or_future_as_of_is_refused_and_echoed(handed_over, operator, as_of, status, code):
    response = operator.get(AUTHORITY, as_of=as_of)
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == code
    assert response.json()["as_of"] == as_of


def test_an_unavailable_owner_is_unavailable_for_history_too(handed_over, operator):
    sandbox_fault_add(source=REGISTRY, kind="unavailable", count=1)
    response = operator.get(AUTHORITY, as_of=rfc3339(timezone.now()))
    assert response.status_code == 503
    assert response.json()["code"] == "owner_unavailable"
