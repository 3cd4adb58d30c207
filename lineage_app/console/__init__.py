"""Lineage's console page: the explorer (a node, its upstream and downstream as a graph).

Who may open it comes from the host (`LINEAGE_CONSOLE_ACCESS`); what a node's click opens,
its colour and its column come from the registry (`lineage_app.registry`).
"""
