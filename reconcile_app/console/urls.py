from __future__ import annotations

from django.urls import path

from reconcile_app.console.views import (
    audit,
    blast_radius,
    bulk,
    contracts,
    contradictions,
    corrections,
    effect_compensation,
    effects,
    escalations,
    evidence,
    facts,
    habits,
    jobs,
    memories,
    overview,
    promotions,
    quarantine,
    snapshots,
)

urlpatterns = [
    path("", overview.OverviewView.as_view(), name="console-home"),
    path("go/", habits.GotoView.as_view(), name="console-goto"),
    path("tokens/", habits.TokensView.as_view(), name="console-tokens"),
    path(
        "tokens/<str:prefix>/revoke/",
        habits.TokenRevokeView.as_view(),
        name="console-token-revoke",
    ),
    # Reviewing what lineage reaches; the explorer itself (/lineage/) is lineage_app's.
    path(
        "lineage/blast-radius/",
        blast_radius.BlastRadiusView.as_view(),
        name="console-blast-radius",
    ),
    path(
        "corrections/<str:correction_id>/",
        corrections.CorrectionDetailView.as_view(),
        name="console-correction",
    ),
    path(
        "evidence/<str:evidence_id>/correct/",
        evidence.EvidenceCorrectView.as_view(),
        name="console-evidence-correct",
    ),
    path(
        "evidence/<str:evidence_id>/",
        evidence.EvidenceDetailView.as_view(),
        name="console-evidence",
    ),
    path(
        "snapshots/<str:snapshot_id>/replay/",
        snapshots.SnapshotReplayView.as_view(),
        name="console-snapshot-replay",
    ),
    path("snapshots/", snapshots.SnapshotListView.as_view(), name="console-snapshots"),
    path(
        "snapshots/<str:snapshot_id>/",
        snapshots.SnapshotDetailView.as_view(),
        name="console-snapshot",
    ),
    path(
        "contradictions/",
        contradictions.ContradictionListView.as_view(),
        name="console-contradictions",
    ),
    path(
        "contradictions/bulk/",
        bulk.ContradictionBulkPreviewView.as_view(),
        name="console-contradictions-bulk",
    ),
    path(
        "contradictions/<int:contradiction_id>/resolve/",
        contradictions.ContradictionResolveView.as_view(),
        name="console-contradiction-resolve",
    ),
    path("escalations/", escalations.EscalationListView.as_view(), name="console-escalations"),
    path(
        "escalations/<str:escalation_id>/",
        escalations.EscalationDetailView.as_view(),
        name="console-escalation",
    ),
    path(
        "escalations/<str:escalation_id>/approve/",
        escalations.EscalationDecideView.as_view(approve=True),
        name="console-escalation-approve",
    ),
    path(
        "escalations/<str:escalation_id>/reject/",
        escalations.EscalationDecideView.as_view(approve=False),
        name="console-escalation-reject",
    ),
    path("promotions/", promotions.PromotionListView.as_view(), name="console-promotions"),
    path(
        "promotions/<str:escalation_id>/approve/",
        promotions.PromotionDecideView.as_view(approve=True),
        name="console-promotion-approve",
    ),
    path(
        "promotions/<str:escalation_id>/reject/",
        promotions.PromotionDecideView.as_view(approve=False),
        name="console-promotion-reject",
    ),
    path(
        "memory-classes/",
        memories.MemoryClassListView.as_view(),
        name="console-memory-classes",
    ),
    path("memories/<str:memory_id>/", memories.MemoryDetailView.as_view(), name="console-memory"),
    path("contracts/", contracts.ContractListView.as_view(), name="console-contracts"),
    # Versions are free text (they may hold a dot or a slash): `path`, with the version's own
    # page last so its action URLs match first.
    path(
        "contracts/<str:decision_class>/diff/",
        contracts.ContractDiffView.as_view(),
        name="console-contract-diff",
    ),
    path(
        "contracts/<str:decision_class>/<path:version>/activate/",
        contracts.ContractActivateView.as_view(),
        name="console-contract-activate",
    ),
    path(
        "contracts/<str:decision_class>/<path:version>/release/",
        contracts.ContractReleaseView.as_view(),
        name="console-contract-release",
    ),
    path(
        "contracts/<str:decision_class>/<path:version>/",
        contracts.ContractDetailView.as_view(),
        name="console-contract",
    ),
    path("facts/", facts.FactListView.as_view(), name="console-facts"),
    # Keys are free text (an idempotency key may hold a slash): `path`, with the detail page
    # last so the action URLs match first.
    path("facts/<path:fact_key>/", facts.FactDetailView.as_view(), name="console-fact"),
    path("effects/", effects.EffectListView.as_view(), name="console-effects"),
    # Outside `effects/`: every segment there may be an idempotency key ("bulk" included),
    # and the effect with that key keeps its page at `effects/bulk/`.
    path("bulk/effects/", bulk.BulkPreviewView.as_view(), name="console-effects-bulk"),
    path("jobs/<str:job_id>/", jobs.JobDetailView.as_view(), name="console-job"),
    path("jobs/<str:job_id>/cancel/", jobs.JobCancelView.as_view(), name="console-job-cancel"),
    path(
        "effects/<path:key>/status/",
        effects.EffectStatusView.as_view(),
        name="console-effect-status",
    ),
    path(
        "effects/<path:key>/check/",
        effects.EffectCheckView.as_view(),
        name="console-effect-check",
    ),
    path(
        "effects/<path:key>/resolve/",
        effects.EffectResolveView.as_view(),
        name="console-effect-resolve",
    ),
    path(
        "effects/<path:key>/compensate/",
        effect_compensation.EffectCompensateView.as_view(),
        name="console-effect-compensate",
    ),
    path(
        "effects/<path:key>/escalate/",
        effects.EffectEscalateView.as_view(),
        name="console-effect-escalate",
    ),
    path("effects/<path:key>/", effects.EffectDetailView.as_view(), name="console-effect"),
    path("quarantine/", quarantine.QuarantinePageView.as_view(), name="console-quarantine"),
    path("quarantine/new/", quarantine.QuarantineNewView.as_view(), name="console-quarantine-new"),
    path(
        "quarantine/targets/<str:scope>/<path:target>/",
        quarantine.QuarantineTargetView.as_view(),
        name="console-quarantine-target",
    ),
    path(
        "quarantine/<str:quarantine_id>/lift/",
        quarantine.QuarantineLiftView.as_view(),
        name="console-quarantine-lift",
    ),
    path("audit/", audit.AuditListView.as_view(), name="console-audit"),
    path("audit/export.csv", audit.AuditExportView.as_view(), name="console-audit-export"),
    path(
        "audit/timeline/<str:object_kind>/",
        audit.AuditTimelineView.as_view(),
        name="console-audit-timeline-kind",
    ),
    path(
        "audit/timeline/<str:object_kind>/<path:object_ref>/",
        audit.AuditTimelineView.as_view(),
        name="console-audit-timeline",
    ),
]
