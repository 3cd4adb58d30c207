"""The lineage API: descendants, ancestors, blast radius and PROV export of any node.

Access comes from the host (`LINEAGE_API_PERMISSION_CLASSES`, see `lineage_app.conf`); errors
are DRF exceptions with a stable code (`lineage_app.api.exceptions`), which the host's
exception handler renders.
"""
