"""The MCP server (the `mcp` extra): `python -m reconcile_client.mcp`. See `server.py`."""
