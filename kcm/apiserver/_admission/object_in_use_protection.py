"""``StorageObjectInUseProtection``: claims and volumes are created with the finalizer their
protection controller removes once nothing uses them any more."""

from __future__ import annotations

from typing import Final

from .._registry import Resource
from .._store import Obj
from ._plugin import Attributes, Plugin

__all__ = ["StorageObjectInUseProtection", "protect"]

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


class StorageObjectInUseProtection(Plugin):
    """The plugin: creates of claims and volumes."""

    name = "StorageObjectInUseProtection"

    def admit(self, a: Attributes) -> None:
        if a.operation == "CREATE":
            protect(a.resource, a.obj)
