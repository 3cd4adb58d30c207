"""Fuzz the whole OpenAPI schema in-process: no 5xx, and every response — errors included —
matches what the schema documents (status code, content type, body, headers), its problem
code among those the operation lists (tests/openapi_conformance.py, whose middleware refuses
an undeclared one; the failure is raised here with its message, as the test client would).

Excluded on purpose: `negative_data_rejection` / `positive_data_acceptance` judge input
leniency (DRF coerces "1" to 1, for instance), and `missing_required_header` expects
400-style codes where docs/api.md fixes 428 for a missing If-Match (tested directly in
tests/reconcile_app/effects/test_commit_codes.py).
"""

from __future__ import annotations

import sys

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import (
    missing_required_header,
    negative_data_rejection,
    not_a_server_error,
    positive_data_acceptance,
)

from config.wsgi import application

schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", application)
NOT_JUDGED = [
    negative_data_rejection,
    positive_data_acceptance,
    missing_required_header,
    not_a_server_error,
]


def no_undocumented_server_error(ctx, response, case):
    """A 5xx is a failure unless the operation documents it as an answer (docs/api.md's 503
    `current_authority_unavailable` and `owner_unavailable` are answers, not crashes)."""
    if response.status_code >= 500:
        documented = case.operation.definition.raw.get("responses", {})
        assert str(response.status_code) in documented, (
            f"undocumented server error {response.status_code}: {response.text[:300]}"
        )
    return None


@pytest.fixture
def fuzz_operator(estate, agent, operator):
    # Requests go straight into the WSGI app (not Django's test client), so keep Django
    # from closing the test transaction's connection at the end of each request, exactly
    # as the test client does.
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield operator
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def raised():
    """Exceptions raised while answering (the test client re-raises these; WSGI does not)."""
    from django.core.signals import got_request_exception

    found: list[BaseException] = []

    def keep(sender, request=None, **kwargs):
        error = sys.exc_info()[1]
        if error is not None:
            found.append(error)

    got_request_exception.connect(keep, weak=False)
    yield found
    got_request_exception.disconnect(keep)


@schema.parametrize()
@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
    ],
)
@pytest.mark.django_db
def test_api_conforms_to_its_schema(case, fuzz_operator, raised, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_CLASSES": []}
    # Schemathesis replays each successful case with invalid credentials and expects 401:
    # within one operation's examples that passes the per-address key-failure limit, after
    # which invalid keys answer 429 (tests/test_security.py). Lift it here, as the rate
    # limit above is lifted, so every replay is checked rather than cut off.
    settings.RECONCILE_FAILURE_LIMITS = {**settings.RECONCILE_FAILURE_LIMITS, "api_key": 10**9}
    raised.clear()  # one list for every example hypothesis runs with this fixture
    try:
        case.call_and_validate(
            headers={"Authorization": f"Bearer {fuzz_operator.key}"},
            excluded_checks=NOT_JUDGED,
            additional_checks=[no_undocumented_server_error],
        )
    finally:
        undeclared = [error for error in raised if isinstance(error, AssertionError)]
        if undeclared:
            raise undeclared[0]
