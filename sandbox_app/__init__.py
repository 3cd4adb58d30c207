"""The sandbox: a built-in reference owner system for demos, drills and tests.

A real owner system, not a mock: versioned records, its own idempotency ledger, event logs
and fault injection, read in-process by its adapter (`sandbox_app.adapter`, registered as
`sandbox` in RECONCILE_ADAPTERS) and served to operators over the owner contract at
`/api/v1/sandbox/{source}/`. It plugs into reconcile_app (the audit trail, errors,
permissions, input limits), which never imports it: the adapter is configured by dotted path.
"""
