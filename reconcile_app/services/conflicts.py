"""What makes two reconciles the same question, so a retry joins instead of piling up.

An agent that is told `escalate` often asks again, and so does every worker retrying the same
step. Each retry reads state afresh and gets its own snapshot, but if it raises the same
question — the same principal, decision class, contract version, subject, proposed action
and value, reasons and disagreements — a reviewer has exactly one thing to decide. These
keys name that question; versions and times are left out on purpose, because a retry reads
them anew.
"""

from __future__ import annotations

from typing import Any

from reconcile_app.canonical import canonical_json, sha256_hex


def contradiction_signature(item: dict[str, Any]) -> str:
    """Two values for one field, from the same two places: the same disagreement."""
    return sha256_hex(
        canonical_json(
            [
                item["kind"],
                item["subject"],
                item["field"],
                item["state"]["value"],
                item["state"]["source"],
                item["other"]["value"],
                item["other"]["source"],
                item["other"]["ref"],
            ]
        )
    )


def escalation_conflict_key(content: dict[str, Any]) -> str:
    """The question an `escalate` snapshot puts to a reviewer."""
    binding = content["binding"]
    # Absent and null are different proposals: null binds the value null.
    proposed_value = [binding["proposed_value"]] if "proposed_value" in binding else []
    return sha256_hex(
        canonical_json(
            {
                # Who asks is part of the question: a reviewer approves one principal's
                # proposal, and only that principal may read and act on the escalation.
                "principal": binding["principal"],
                "decision_class": binding["decision_class"],
                "contract_version": content["contract"]["version"],
                "subject": binding["subject"],
                "proposed_action": binding["proposed_action"],
                "proposed_value": proposed_value,
                "reasons": sorted(reason["code"] for reason in content["decision"]["reasons"]),
                "contradictions": sorted(
                    contradiction_signature(item) for item in content["contradictions"]
                ),
            }
        )
    )
