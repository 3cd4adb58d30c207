from __future__ import annotations

from django.db import models

from reconcile_app.choices import Consistency


class Source(models.Model):
    """A system that owns one or more fact classes and is read through an adapter.

    Invariants: `name` is unique and stable (snapshots refer to it); `adapter` names a
    registered adapter or a dotted path that was importable when the file was loaded.
    Reloading a source file updates its row in place: sources are configuration, while what
    was read from them is kept immutably inside snapshots.
    """

    name = models.SlugField(max_length=100, unique=True)
    owner = models.CharField(max_length=200)
    adapter = models.CharField(max_length=300)
    base_url = models.URLField(max_length=500, blank=True, default="")
    consistency = models.CharField(max_length=20, choices=Consistency.choices)
    # live: read the current value; event_sourced: fold the owner's events with a reducer.
    mode = models.CharField(max_length=15, default="live")
    expected_lag_seconds = models.PositiveIntegerField(default=0)
    fact_classes = models.JSONField(default=list)
    # Glob patterns of the fact keys whose authority (owner, source revision) this source
    # answers for, e.g. ["baseline.*"]. select_current asks the first source that matches.
    fact_keys = models.JSONField(default=list, blank=True)
    # Adapter-specific settings from the YAML file (e.g. auth_token_env, timeout_ms).
    options = models.JSONField(default=dict, blank=True)
    document = models.JSONField(default=dict)
    loaded_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name
