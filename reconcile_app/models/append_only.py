"""Append-only enforcement in the application (PostgreSQL also refuses by trigger).

Evidence, snapshots and what they contain, decision receipts, effect timelines and the
audit trail are inserted once. Updating or deleting them through the ORM raises, so a bug
cannot quietly rewrite history on any database. On PostgreSQL, triggers installed by
reconcile_app's migration 0009 (which lists the tables) refuse raw SQL changes too.
"""

from __future__ import annotations

from typing import Any

from django.db import models


class AppendOnlyViolation(Exception):
    pass


class AppendOnlyQuerySet(models.QuerySet):
    def update(self, **kwargs: Any) -> int:
        raise AppendOnlyViolation(f"{self.model.__name__} is append-only: no UPDATE")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise AppendOnlyViolation(f"{self.model.__name__} is append-only: no DELETE")


class AppendOnlyModel(models.Model):
    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        # A row that already exists is never written again.
        if not self._state.adding:
            raise AppendOnlyViolation(f"{type(self).__name__} is append-only: no UPDATE")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise AppendOnlyViolation(f"{type(self).__name__} is append-only: no DELETE")
