"""How an operation is documented in the OpenAPI schema (docs/api.md "The schema").

Every operation names itself (`operationId`), says what it does in a line (`summary`), sits
under one tag (its resource) and lists the problem codes it can answer at each status. The
codes go in the operation's `x-problem-codes` extension; the postprocessing hook
(reconcile_app.api.schema) moves them onto each error response, adds the codes every
operation shares, and makes every error body `application/problem+json`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema

from reconcile_app.api.problem_serializers import ProblemOutput
from reconcile_app.limits import MAX_IDENTIFIER_LENGTH

PROBLEM_CODES = "x-problem-codes"

# The resources, in the order the documentation lists them; every operation has one of these.
TAGS: dict[str, str] = {
    "me": "Who the caller is and what it may do.",
    "reconcile": "Reconcile a proposed action against the owners' state: issue a snapshot.",
    "snapshots": "Issued snapshots: read them and replay them.",
    "effects": "Commit effects against the version a snapshot read; follow their outcomes.",
    "evidence": "The append-only evidence ledger.",
    "memories": "Agents' memories, admitted with their derivation.",
    "memory-classes": "The declared memory classes and their rules.",
    "facts": "Operational facts selected by the owner's rule.",
    "escalations": "Questions a person decides: ambiguity, approvals, promotions.",
    "contradictions": "Disagreements preserved for review.",
    "jobs": "Bulk triage jobs: many effects re-checked or resolved as one audited job.",
    "corrections": "Corrections of evidence, with their blast radius.",
    "quarantines": "Quarantine a source, a memory class or one memory.",
    "lineage": "Descendants, ancestors, blast radius and PROV export of any node.",
    "contracts": "Contract versions, their release gates and activation.",
    "audit": "The audit trail of people's actions.",
    "metrics": "Operational figures, as JSON and for Prometheus.",
    "sandbox": "The built-in sandbox owner system (operators, demos and drills).",
}


def identifier_path(name: str, description: str = "") -> OpenApiParameter:
    """A path part that names one thing (a subject, a field, a key...)."""
    return OpenApiParameter(
        name,
        {"type": "string", "minLength": 1, "maxLength": MAX_IDENTIFIER_LENGTH},
        OpenApiParameter.PATH,
        description=description or f"an identifier (1-{MAX_IDENTIFIER_LENGTH} characters)",
    )


# An Idempotency-Key is an identifier (docs/api.md "Input limits") in visible ASCII, as it is
# sent on to owners in a header: 1-200 characters, no '/', '\' or space, never '.' or '..'.
IDEMPOTENCY_KEY_PATTERN = r"^(?!\.\.?$)[\x21-\x2e\x30-\x5b\x5d-\x7e]+$"

IDEMPOTENCY_KEY = OpenApiParameter(
    "Idempotency-Key",
    {
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_IDENTIFIER_LENGTH,
        "pattern": IDEMPOTENCY_KEY_PATTERN,
    },
    OpenApiParameter.HEADER,
    required=True,
    description="Names this command for good: a retry with the same key and request is "
    "answered from the record, never executed twice. An identifier in visible ASCII: 1-200 "
    "characters, no '/', '\\' or space (else 400 `invalid_identifier`).",
)
IF_MATCH = OpenApiParameter(
    "If-Match",
    {"type": "string", "pattern": r'^(W/)?"[0-9]+"$', "maxLength": 64},
    OpenApiParameter.HEADER,
    required=True,
    description='The version the command is made against, quoted: `"42"` (a snapshot gives '
    "it ready in `actions[name].if_match`). Missing: 428 `precondition_required`; not a "
    "quoted version (ASCII digits): 400 `invalid_if_match`.",
)


def idempotent_replayed(statuses: Sequence[int]) -> OpenApiParameter:
    return OpenApiParameter(
        "Idempotent-Replayed",
        {"type": "string", "enum": ["true"]},
        OpenApiParameter.HEADER,
        response=list(statuses),
        description="`true` when the answer is the recorded outcome of an earlier request "
        "with the same Idempotency-Key (nothing was executed again).",
    )


def etag(statuses: Sequence[int]) -> OpenApiParameter:
    return OpenApiParameter(
        "ETag",
        {"type": "string", "pattern": r'^"[0-9]+"$'},
        OpenApiParameter.HEADER,
        response=list(statuses),
        description='The record\'s version, quoted (`"42"`): send it back as `If-Match`.',
    )


def query_int(name: str, low: int, high: int | None, description: str) -> OpenApiParameter:
    schema: dict[str, Any] = {"type": "integer", "minimum": low}
    if high is not None:
        schema["maximum"] = high
    return OpenApiParameter(name, schema, OpenApiParameter.QUERY, description=description)


def query_time(name: str, description: str) -> OpenApiParameter:
    return OpenApiParameter(name, OpenApiTypes.DATETIME, description=description)


def api_operation(
    *,
    operation_id: str,
    summary: str,
    tag: str,
    problems: Mapping[int, Sequence[str]] | None = None,
    responses: Mapping[Any, Any] | None = None,
    **kwargs: Any,
) -> Callable[[Any], Any]:
    """`extend_schema` for one operation, with its problem codes per status.

    A status listed in `problems` without a response of its own answers a plain Problem; give
    one in `responses` when the body says more (a fact's candidates, say). Without
    `responses` the view's own (a list's page, a retrieve's object) stand.
    """
    if tag not in TAGS:
        raise ValueError(f"unknown tag {tag!r}: add it to TAGS")
    if responses is not None:
        declared = dict(responses)
        for status in problems or {}:
            declared.setdefault(status, ProblemOutput)
        kwargs["responses"] = declared
    codes = {str(status): sorted(set(names)) for status, names in (problems or {}).items()}
    return extend_schema(
        operation_id=operation_id,
        summary=summary,
        tags=[tag],
        extensions={PROBLEM_CODES: codes} if codes else None,
        **kwargs,
    )
