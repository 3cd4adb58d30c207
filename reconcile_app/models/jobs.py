from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from reconcile_app.choices import BulkItemState, BulkJobAction, BulkJobKind, BulkJobStatus


class BulkJob(models.Model):
    """One operator's bulk triage of many effects (or contradictions), run as one Celery task.

    States: created `running` with its items fixed (the selection is resolved when the job is
    made, so a filter that later matches more rows never grows the job); the task acts on
    each `pending` item in turn, each in its own transaction, and moves it to `done`,
    `skipped` (already concluded when the job reached it: nothing is redone),
    `still_unknown` (re-checked, and the owner could not settle it yet) or `failed`;
    when no item is pending the job is `done` (`finished_at` set). An operator may cancel a
    running job (`running → cancelled`, with who and why): its pending items are skipped, the
    item being acted on at that moment finishes or is undone, and nothing more is done.
    `running → done | cancelled` only.

    Liveness: `heartbeat_at` moves when the job is made, when a run picks it up, with every
    item it finishes and when the sweep re-queues it. A `running` job whose heartbeat is
    older than BULK_JOB_STALE_SECONDS lost its task (a killed worker, a broker restart, the
    task's time limit) and the sweep (`bulk_jobs_sweep`) queues it again; `requeues` counts
    those rescues. Running it again is safe: only `pending` items are acted on.

    Invariants: `count` is the number of items and never changes; `done` counts items
    finished without error (`skipped` and `still_unknown` ones included, and counted again
    in `skipped` / `still_unknown`); `done + failed <= count`, equal once the job is `done`.
    Counters move only in the transaction that moves their item out of `pending`, so a
    redelivered task cannot count an item twice. Every audit row the job writes carries
    `request_id`, the id of the request that created it.
    """

    job_id = models.CharField(max_length=40, unique=True)
    kind = models.CharField(max_length=20, choices=BulkJobKind.choices)
    action = models.CharField(max_length=20, choices=BulkJobAction.choices)
    # Effects resolved by hand: succeeded | not_executed; blank otherwise.
    outcome = models.CharField(max_length=20, blank=True, default="")
    reason = models.TextField()
    # The selection as asked for ({"keys": [...]} or {"filter": {...}}), for the record.
    selection = models.JSONField(default=dict)
    status = models.CharField(
        max_length=10, choices=BulkJobStatus.choices, default=BulkJobStatus.RUNNING
    )
    count = models.PositiveIntegerField()
    done = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(default=0)
    # Columns added after the table: a default in the database as well, for the inserts of a
    # release before them that still runs while a rolling upgrade migrates (docs/deploy.md).
    still_unknown = models.PositiveIntegerField(default=0, db_default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_by_name = models.CharField(max_length=150)
    request_id = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(default=timezone.now)
    requeues = models.PositiveIntegerField(default=0)
    cancelled_by_name = models.CharField(max_length=150, blank=True, default="", db_default="")
    cancel_reason = models.TextField(blank=True, default="", db_default="")

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            # The sweep's question: which running jobs have gone quiet?
            models.Index(fields=["status", "heartbeat_at"], name="bulk_job_liveness"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(done__lte=models.F("count"))
                & models.Q(failed__lte=models.F("count"))
                & models.Q(skipped__lte=models.F("done"))
                & models.Q(still_unknown__lte=models.F("done")),
                name="bulk_job_counts_bounded",
            )
        ]

    def __str__(self) -> str:
        return self.job_id

    @property
    def processed(self) -> int:
        return self.done + self.failed

    @property
    def percent(self) -> int:
        return round(100 * self.processed / self.count) if self.count else 100


class BulkJobItem(models.Model):
    """One effect (by idempotency key) or contradiction (by id) of a bulk job.

    States: `pending → done | skipped | still_unknown | failed`, once, by a conditional
    UPDATE on `pending`. `before` and `after` are the object's status when the job reached it
    and when it left; `detail` says why an item was skipped, is still unknown or failed.
    """

    job = models.ForeignKey(BulkJob, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveIntegerField()
    ref = models.CharField(max_length=200)
    state = models.CharField(
        max_length=20, choices=BulkItemState.choices, default=BulkItemState.PENDING
    )
    before = models.CharField(max_length=40, blank=True, default="")
    after = models.CharField(max_length=40, blank=True, default="")
    detail = models.TextField(blank=True, default="")
    finished_at = models.DateTimeField(null=True, blank=True)
    # An effect's status when the job was made: an operator's verdict is given on that state
    # (an outcome that meanwhile moved from unknown to postcondition_failed is skipped).
    # A default in the database too: a previous release's insert does not name it.
    selected_status = models.CharField(max_length=40, blank=True, default="", db_default="")

    class Meta:
        ordering = ["job", "position"]
        constraints = [
            models.UniqueConstraint(fields=["job", "ref"], name="bulk_job_item_once"),
            models.UniqueConstraint(fields=["job", "position"], name="bulk_job_item_position"),
        ]

    def __str__(self) -> str:
        return f"{self.job_id}:{self.ref}"
