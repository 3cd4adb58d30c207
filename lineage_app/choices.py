"""Every enumerated value of lineage_app, in one place."""

from __future__ import annotations

from django.db import models


class Relation(models.TextChoices):
    """W3C PROV relations, read from the downstream node: `dst <relation> src`."""

    USED = "used"
    WAS_GENERATED_BY = "wasGeneratedBy"
    WAS_DERIVED_FROM = "wasDerivedFrom"
    WAS_ATTRIBUTED_TO = "wasAttributedTo"
    WAS_INVALIDATED_BY = "wasInvalidatedBy"
