from __future__ import annotations

from django.urls import path

from reconcile_app.api.views import (
    audit,
    contracts,
    contradictions,
    corrections,
    effects,
    facts,
    jobs,
    ledger,
    me,
    memory_classes,
    metrics,
    quarantine,
    reconcile,
)

urlpatterns = [
    path("me", me.MeView.as_view(), name="api-me"),
    path("reconcile", reconcile.ReconcileView.as_view(), name="api-reconcile"),
    path("snapshots", reconcile.SnapshotListView.as_view(), name="api-snapshots"),
    path(
        "snapshots/<str:snapshot_id>", reconcile.SnapshotDetailView.as_view(), name="api-snapshot"
    ),
    path(
        "snapshots/<str:snapshot_id>/replay",
        reconcile.SnapshotReplayView.as_view(),
        name="api-snapshot-replay",
    ),
    path("contracts", contracts.ContractListView.as_view(), name="api-contracts"),
    path(
        "contracts/<str:decision_class>/<str:version>",
        contracts.ContractDetailView.as_view(),
        name="api-contract",
    ),
    path(
        "contracts/<str:decision_class>/<str:version>/activate",
        contracts.ContractActivateView.as_view(),
        name="api-contract-activate",
    ),
    path("evidence", ledger.EvidenceListView.as_view(), name="api-evidence"),
    path(
        "evidence/<str:evidence_id>",
        ledger.EvidenceDetailView.as_view(),
        name="api-evidence-detail",
    ),
    path("memories", ledger.MemoryListView.as_view(), name="api-memories"),
    path("memories/<str:memory_id>", ledger.MemoryDetailView.as_view(), name="api-memory"),
    path("memory-classes", memory_classes.MemoryClassListView.as_view(), name="api-memory-classes"),
    path(
        "memory-classes/<str:name>",
        memory_classes.MemoryClassDetailView.as_view(),
        name="api-memory-class",
    ),
    path(
        "contradictions", contradictions.ContradictionListView.as_view(), name="api-contradictions"
    ),
    path(
        "contradictions/bulk", jobs.ContradictionBulkView.as_view(), name="api-contradictions-bulk"
    ),
    path(
        "contradictions/<int:contradiction_id>/resolve",
        contradictions.ContradictionResolveView.as_view(),
        name="api-contradiction-resolve",
    ),
    path("corrections", corrections.CorrectionsView.as_view(), name="api-corrections"),
    path(
        "corrections/<str:correction_id>",
        corrections.CorrectionDetailView.as_view(),
        name="api-correction",
    ),
    path("audit", audit.AuditListView.as_view(), name="api-audit"),
    path("quarantines", quarantine.QuarantineListView.as_view(), name="api-quarantines"),
    path(
        "quarantines/<str:quarantine_id>",
        quarantine.QuarantineDetailView.as_view(),
        name="api-quarantine",
    ),
    path(
        "quarantines/<str:quarantine_id>/lift",
        quarantine.QuarantineLiftView.as_view(),
        name="api-quarantine-lift",
    ),
    path("effects", effects.EffectListView.as_view(), name="api-effects"),
    # Before `effects/<key>`: "bulk" names the bulk endpoint, not an effect.
    path("effects/bulk", jobs.EffectBulkView.as_view(), name="api-effects-bulk"),
    path("jobs/<str:job_id>", jobs.JobDetailView.as_view(), name="api-job"),
    path("jobs/<str:job_id>/cancel", jobs.JobCancelView.as_view(), name="api-job-cancel"),
    path("effects/<str:key>", effects.EffectDetailView.as_view(), name="api-effect"),
    path(
        "effects/<str:key>/readback",
        effects.EffectReadbackView.as_view(),
        name="api-effect-readback",
    ),
    path(
        "effects/<str:key>/escalate",
        effects.EffectEscalateView.as_view(),
        name="api-effect-escalate",
    ),
    path(
        "effects/<str:key>/compensate",
        effects.EffectCompensateView.as_view(),
        name="api-effect-compensate",
    ),
    path(
        "effects/<str:key>/resolve", effects.EffectResolveView.as_view(), name="api-effect-resolve"
    ),
    path("facts/<str:fact_key>/current", facts.FactCurrentView.as_view(), name="api-fact-current"),
    path("escalations", facts.EscalationListView.as_view(), name="api-escalations"),
    path(
        "escalations/<str:escalation_id>",
        facts.EscalationDetailView.as_view(),
        name="api-escalation",
    ),
    path(
        "escalations/<str:escalation_id>/approve",
        facts.EscalationApproveView.as_view(),
        name="api-escalation-approve",
    ),
    path(
        "escalations/<str:escalation_id>/reject",
        facts.EscalationRejectView.as_view(),
        name="api-escalation-reject",
    ),
    path("metrics", metrics.MetricsView.as_view(), name="api-metrics"),
]
