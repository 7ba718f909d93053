"""The informer's transform hook: its type and a ready-made one.

The reflector applies the transform to every listed or watched object before it reaches the
DeltaFIFO (see :class:`SharedIndexInformer` ``transform=`` and ``set_transform``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import msgspec

from kcm.models import Unstructured

__all__ = ["Transform", "strip_managed_fields"]

T = TypeVar("T")

Transform = Callable[[T], T]
"""Applied once to every object entering the cache (e.g. to strip managedFields)."""


def strip_managed_fields(obj: T) -> T:
    """Drop ``metadata.managedFields`` (often half of an object's size) before caching.

    Returns the object itself when it has no managedFields (idempotent and allocation-free
    then, as controller-runtime's ``TransformStripManagedFields``); otherwise a copy.
    Works on frozen models, ``PartialObjectMetadata`` and ``Unstructured``.
    """
    if isinstance(obj, Unstructured):
        metadata = obj.get("metadata")
        if not metadata or "managedFields" not in metadata:
            return obj
        data: dict[str, Any] = obj.to_dict()
        data["metadata"].pop("managedFields", None)
        return Unstructured.from_dict(data)  # type: ignore[return-value]
    meta: Any = getattr(obj, "metadata", None)
    if meta is None or getattr(meta, "managed_fields", None) is None:
        return obj
    return msgspec.structs.replace(  # type: ignore[type-var]
        obj, metadata=msgspec.structs.replace(meta, managed_fields=None)
    )
