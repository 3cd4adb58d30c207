"""Console pages for lineage: the explorer, blast-radius reports, corrections, evidence, replay.

Included from the console's URLs, so every page sits beside the ones it links to.
"""

from __future__ import annotations

from django.urls import path

from lineage_app import console

urlpatterns = [
    path("lineage/", console.LineageExplorerView.as_view(), name="console-lineage"),
    path(
        "lineage/blast-radius/",
        console.BlastRadiusView.as_view(),
        name="console-blast-radius",
    ),
    path(
        "corrections/<str:correction_id>/",
        console.CorrectionDetailView.as_view(),
        name="console-correction",
    ),
    path(
        "evidence/<str:evidence_id>/correct/",
        console.EvidenceCorrectView.as_view(),
        name="console-evidence-correct",
    ),
    path(
        "evidence/<str:evidence_id>/", console.EvidenceDetailView.as_view(), name="console-evidence"
    ),
    path(
        "snapshots/<str:snapshot_id>/replay/",
        console.SnapshotReplayView.as_view(),
        name="console-snapshot-replay",
    ),
]
