"""Validate memory class documents (one YAML file each): the kind's rules, who owns the class.

```yaml
memory_class: product-notes
kind: episodic            # episodic | preference | procedural | policy | fact
owner: platform-operations
default_ttl_days: 30      # a memory written without valid_until expires then (not for facts)
admission: direct         # direct | review (procedural and policy are always review)
```
"""

from __future__ import annotations

import re
from typing import Any

from reconcile_app.choices import MemoryAdmission, MemoryKind
from reconcile_app.services.contract_files import ParsedFile
from reconcile_app.services.contract_schema import refuse_unknown_keys, require_key

MEMORY_CLASS_NAME = re.compile(r"^[A-Za-z0-9_-]{1,100}$")
MEMORY_CLASS_KEYS = {
    "memory_class",
    "kind",
    "owner",
    "default_ttl_days",
    "admission",
    "description",
}
# A century: a longer TTL is no expiry rule (declare none: null). Unbounded, 3,000,000 days
# ran past the calendar and every write of the class answered 500; past 2**31 PostgreSQL's
# column refused the load.
MAX_TTL_DAYS = 36500
# Rule-like memory needs an approved owner or remains a suggestion (seed 000).
ALWAYS_REVIEWED = (MemoryKind.PROCEDURAL, MemoryKind.POLICY)


def memory_class_values(parsed: ParsedFile) -> dict[str, Any]:
    data = parsed.data
    refuse_unknown_keys(parsed, data, MEMORY_CLASS_KEYS)
    name = require_key(parsed, data, "memory_class", str)
    if not MEMORY_CLASS_NAME.match(name):
        raise parsed.fail(
            "`memory_class` must be a slug (letters, digits, '-', '_')", "memory_class"
        )
    kind = require_key(parsed, data, "kind", str)
    if kind not in MemoryKind.values:
        raise parsed.fail(f"`kind` must be one of {', '.join(MemoryKind.values)}", "kind")
    owner = require_key(parsed, data, "owner", str)
    if not owner.strip():
        raise parsed.fail("`owner` names who governs the class", "owner")
    ttl = data.get("default_ttl_days")
    if ttl is not None and (not isinstance(ttl, int) or isinstance(ttl, bool) or ttl < 1):
        raise parsed.fail(
            "`default_ttl_days` must be a positive integer or null", "default_ttl_days"
        )
    if ttl is not None and ttl > MAX_TTL_DAYS:
        raise parsed.fail(
            f"`default_ttl_days` must be at most {MAX_TTL_DAYS} (a century); "
            "null declares no expiry",
            "default_ttl_days",
        )
    if ttl is not None and kind == MemoryKind.FACT:
        raise parsed.fail(
            "facts expire by their own valid_until and their owner's revision, not by a TTL",
            "default_ttl_days",
        )
    admission = data.get("admission", MemoryAdmission.DIRECT.value)
    if admission not in MemoryAdmission.values:
        raise parsed.fail("`admission` must be direct or review", "admission")
    if kind in ALWAYS_REVIEWED and admission != MemoryAdmission.REVIEW:
        raise parsed.fail(f"{kind} memory is always admitted by review", "admission")
    description = data.get("description") or ""
    if not isinstance(description, str):
        raise parsed.fail("`description` must be text", "description")
    return {
        "name": name,
        "kind": kind,
        "owner": owner,
        "default_ttl_days": ttl,
        "admission": admission,
        "description": description,
        "document": data,
        "source_path": parsed.path,
    }
