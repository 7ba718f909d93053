"""The structural type the runtime reads: any object with a real ``ObjectMeta``."""

from __future__ import annotations

from typing import Protocol

from kcm.models.meta_v1 import ObjectMeta

__all__ = ["HasMetadata"]


class HasMetadata(Protocol):
    """A typed model, ``Unstructured`` or ``PartialObjectMetadata``: anything with metadata."""

    @property
    def metadata(self) -> ObjectMeta: ...
