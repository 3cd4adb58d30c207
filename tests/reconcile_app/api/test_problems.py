"""The problem handler keeps the stable code of any DRF exception another app raises.

lineage_app knows nothing of reconcile's errors: it raises DRF exceptions whose code is their
`default_code` (or `code=`), and the product's problem+json shape must carry that code.
"""

from __future__ import annotations

from rest_framework import exceptions

from reconcile_app.api.problems import CONTENT_TYPE, problem_exception_handler


class NodeMissing(exceptions.APIException):
    status_code = 404
    default_detail = "Not found."
    default_code = "node_missing"


def test_an_unmapped_api_exception_keeps_its_default_code_and_the_problem_shape():
    response = problem_exception_handler(NodeMissing("no node x:y"), {})
    assert response is not None and response.content_type == CONTENT_TYPE
    assert response.status_code == 404
    assert response.data == {
        "type": "https://reconcile.invalid/problems/node_missing",
        "title": "Not found",
        "status": 404,
        "detail": "no node x:y",
        "code": "node_missing",
    }


def test_a_code_given_when_raising_wins_over_the_default():
    response = problem_exception_handler(NodeMissing("x", code="gone_elsewhere"), {})
    assert response is not None and response.data["code"] == "gone_elsewhere"


def test_a_bad_request_is_titled_invalid_request():
    class Refused(exceptions.APIException):
        status_code = 400
        default_code = "invalid_parameter"

    response = problem_exception_handler(Refused("depth must be an integer"), {})
    assert response is not None
    assert (response.data["title"], response.data["code"]) == (
        "Invalid request",
        "invalid_parameter",
    )


def test_problem_code_is_honoured_on_any_api_exception():
    exc = exceptions.NotFound("no such thing")
    exc.problem_code = "thing_not_found"  # type: ignore[attr-defined]
    response = problem_exception_handler(exc, {})
    assert response is not None and response.data["code"] == "thing_not_found"


def test_drf_exceptions_keep_the_codes_the_api_documents():
    for exc, code in (
        (exceptions.NotFound(), "not_found"),
        (exceptions.PermissionDenied(), "forbidden"),
        (exceptions.ParseError(), "malformed_json"),
        (exceptions.APIException(), "error"),
    ):
        response = problem_exception_handler(exc, {})
        assert response is not None and response.data["code"] == code, exc


def test_titles_name_the_kind_of_problem_not_drfs_template():
    for exc, title in (
        (exceptions.MethodNotAllowed("DELETE"), "Method not allowed"),
        (exceptions.UnsupportedMediaType("text/plain"), "Unsupported media type in request"),
        (exceptions.NotAcceptable(), "Could not satisfy the request Accept header"),
        (exceptions.Throttled(wait=3), "Request was throttled"),
    ):
        response = problem_exception_handler(exc, {})
        assert response is not None and response.data["title"] == title, exc
        assert "{" not in response.data["title"]
    # The instance stays in the detail.
    response = problem_exception_handler(exceptions.MethodNotAllowed("DELETE"), {})
    assert response is not None and "DELETE" in response.data["detail"]


def test_an_accept_header_that_rules_out_json_is_a_declared_406(agent):
    """Answered before credentials are looked at, and declared on every operation (the
    suite's conformance check fails an undeclared status)."""
    from rest_framework.test import APIClient

    for client in (agent.client, APIClient()):
        for accept in ("application/problem+json", "text/html"):
            response = client.get("/api/v1/snapshots", HTTP_ACCEPT=accept)
            assert response.status_code == 406, (accept, response.content)
            assert response["Content-Type"] == CONTENT_TYPE
            assert response.json()["code"] == "not_acceptable"
    both = agent.client.get(
        "/api/v1/snapshots", HTTP_ACCEPT="application/json, application/problem+json"
    )
    assert (both.status_code, both["Content-Type"]) == (200, "application/json")
