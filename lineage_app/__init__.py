"""lineage_app: a provenance graph any Django project can use; it knows no host's domain.

Every object the host persists may be a node (`kind:ref`) joined by W3C PROV relations. A host:

- mounts `lineage_app.urls` (the API: descendants, ancestors, blast radius, PROV export) and
  `lineage_app.console_urls` (the explorer page at `lineage/`);
- says who may read it: `LINEAGE_API_PERMISSION_CLASSES`, `LINEAGE_CONSOLE_ACCESS`,
  `LINEAGE_PROV_NAMESPACE` (`lineage_app.conf`);
- teaches it its kinds of node, blast-radius entry points and the explorer's words from its
  `AppConfig.ready()` (`lineage_app.registry`);
- renders the API's DRF exceptions (`lineage_app.api.exceptions`, each with a stable code).

Its public functions: writes `services.graph.graph_record` (with `Link`, `models.Relation`);
reads `selectors.reach.reach` / `resolve_roots`, `selectors.blast.blast_radius` /
`roots_for_source_versions`, `selectors.nodes.node_ids` / `nodes_of_kind` / `upstream_refs`;
display `registry.kind_colour` / `kind_order`, `console.links.explorer_url`,
`charts.figure_json`.
"""
