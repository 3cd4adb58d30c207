"""The MCP server (the `mcp` extra): `python -m reconcile_client.mcp`. See `server.py`."""


def run() -> None:
    """Serve over stdio; without the extra installed, say how to get it."""
    try:
        from reconcile_client.mcp.server import main
    except ModuleNotFoundError as missing:
        if (missing.name or "").split(".")[0] != "mcp":
            raise
        raise SystemExit(
            "reconcile_client.mcp needs the MCP SDK: pip install 'reconcile-client[mcp]'"
        ) from missing
    main()
