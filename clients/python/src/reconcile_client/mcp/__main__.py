"""`python -m reconcile_client.mcp`: serve Reconcile's tools over stdio."""

from reconcile_client.mcp import run

run()
