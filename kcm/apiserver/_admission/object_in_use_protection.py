"""``StorageObjectInUseProtection``: claims and volumes are created with the finalizer their
protection controller removes once nothing uses them any more."""

from __future__ import annotations

from typing import Final

from .._registry import Resource
from .._store import Obj

__all__ = ["protect"]

_FINALIZERS: Final = {
    "PersistentVolumeClaim": "kubernetes.io/pvc-protection",
    "PersistentVolume": "kubernetes.io/pv-protection",
}


def protect(res: Resource, obj: Obj) -> None:
    """Add the kind's protection finalizer to a new claim or volume."""
    finalizer = _FINALIZERS.get(res.kind) if res.group == "" else None
    if finalizer is None:
        return
    finalizers = obj["metadata"].setdefault("finalizers", [])
    if finalizer not in finalizers:
        finalizers.append(finalizer)
