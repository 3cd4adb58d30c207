from __future__ import annotations

from django.conf import settings
from django.db import models

from reconcile_app.choices import PrincipalKind


class Principal(models.Model):
    """Who acts: an agent (service principal) or a person, always backed by a Django user.

    Invariants: an agent may only reconcile and commit what its capabilities name (no ambient
    authority); a person acts with the role of their user's groups. `disabled_at` set means
    every key of the principal is refused.
    """

    name = models.CharField(max_length=150, unique=True)
    kind = models.CharField(max_length=10, choices=PrincipalKind.choices)
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="principal"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    disabled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class ApiKey(models.Model):
    """A bearer key. Only its SHA-256 is stored; the key itself is shown once at creation.

    Keys are 256-bit random secrets, so a fast hash is sufficient: there is nothing to
    brute-force that a slow hash would protect. `prefix` locates the row without a scan.
    """

    principal = models.ForeignKey(Principal, on_delete=models.CASCADE, related_name="keys")
    prefix = models.CharField(max_length=16, unique=True)
    key_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.principal.name}:{self.prefix}"


class Capability(models.Model):
    """`decision_class:action` a principal may reconcile and commit: one action each (a `*`
    granted before wildcards were refused grants nothing)."""

    principal = models.ForeignKey(Principal, on_delete=models.CASCADE, related_name="capabilities")
    decision_class = models.CharField(max_length=150)
    action = models.CharField(max_length=150)

    class Meta:
        ordering = ["principal", "decision_class", "action"]
        constraints = [
            models.UniqueConstraint(
                fields=["principal", "decision_class", "action"], name="capability_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.decision_class}:{self.action}"
