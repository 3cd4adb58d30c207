"""The lineage API's refusals: DRF exceptions whose `default_code` (or `code=`) is the stable
code a client reads (`node_not_found`, `invalid_parameter`, `entry_point_missing`,
`invalid_format`). Lineage raises nothing of the host's; the host's exception handler shapes
the body (reconcile renders problem+json)."""

from __future__ import annotations

from rest_framework import status
from rest_framework.exceptions import APIException


class NodeNotFound(APIException):
    status_code = status.HTTP_404_NOT_FOUND
    default_detail = "Not found."
    default_code = "node_not_found"


class InvalidParameter(APIException):
    """A query parameter the API cannot use; `code=` narrows it (`entry_point_missing`)."""

    status_code = status.HTTP_400_BAD_REQUEST
    default_detail = "Invalid request."
    default_code = "invalid_parameter"
