"""Generic wrappers: ``ObjectList[T]``, ``WatchEvent[T]``, ``PartialObjectMetadata``."""

from typing import Generic, TypeVar

import msgspec

from ._base import K8sStruct
from .meta_v1 import ListMeta, ObjectMeta

__all__ = ["ObjectList", "PartialObjectMetadata", "PartialObjectMetadataList", "WatchEvent"]

T = TypeVar("T")


class ObjectList(K8sStruct, Generic[T], frozen=True):
    """A list response (``PodList`` is ``ObjectList[Pod]``).

    ``api_version`` and ``kind`` are filled in by ``kcm.models.encode`` when left unset and the
    list has items; an empty ``items`` is still encoded (as ``[]``) by ``encode``.
    """

    api_version: str | None = None
    kind: str | None = None
    metadata: ListMeta = msgspec.field(default_factory=ListMeta)
    items: list[T] = msgspec.field(default_factory=list)


class WatchEvent(K8sStruct, Generic[T], frozen=True):
    """One line of a watch stream: ``type`` is ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.

    Decode straight from a watch line with ``decoder(WatchEvent[Pod]).decode(line)``.

    Caveat: an ERROR event carries a ``Status``, which does not decode as ``Pod``. Decode
    ``WatchEvent[Pod | Status]`` (a tagged union on ``kind``) to accept both in one pass.
    """

    type: str
    object: T


class PartialObjectMetadata(K8sStruct, frozen=True):
    """Any object, reading only ``apiVersion``, ``kind`` and ``metadata`` (the rest is skipped)."""

    api_version: str | None = None
    kind: str | None = None
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)


class PartialObjectMetadataList(K8sStruct, frozen=True):
    """Any list, reading only the metadata of each item."""

    api_version: str | None = None
    kind: str | None = None
    metadata: ListMeta = msgspec.field(default_factory=ListMeta)
    items: list[PartialObjectMetadata] = msgspec.field(default_factory=list)
