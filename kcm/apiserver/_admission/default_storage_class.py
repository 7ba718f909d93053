"""``DefaultStorageClass``: a new claim that names no class gets the default StorageClass.

A PersistentVolumeClaim created without ``spec.storageClassName`` (absent, not ``""``, which
asks for no class) and without the beta class annotation gets the name of the class annotated
``storageclass.kubernetes.io/is-default-class: "true"`` (or its beta spelling). With several
default classes the newest wins (then the first by name), as kube-apiserver 1.26 and later
decide; 1.24 refuses the claim instead ("2 default StorageClasses were found"), which leaves a
cluster unusable while a new default replaces the old one.
"""

from __future__ import annotations

from typing import Final

from .._store import Obj, Store
from ._plugin import Attributes, Plugin

__all__ = ["DefaultStorageClass", "default_class"]

_DEFAULT_ANNOTATIONS: Final = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
)
_BETA_CLASS_ANNOTATION: Final = "volume.beta.kubernetes.io/storage-class"


def _is_default(storage_class: Obj) -> bool:
    annotations = (storage_class.get("metadata") or {}).get("annotations") or {}
    return any(annotations.get(key) == "true" for key in _DEFAULT_ANNOTATIONS)


def default_class(store: Store) -> str | None:
    """The name of the default StorageClass (newest, then first by name), or None."""
    defaults = [c for c in store.items(("storage.k8s.io", "storageclasses")) if _is_default(c)]
    if not defaults:
        return None

    def created_and_name(storage_class: Obj) -> tuple[str, str]:
        meta = storage_class.get("metadata") or {}
        return (str(meta.get("creationTimestamp") or ""), str(meta.get("name") or ""))

    ranked = [created_and_name(c) for c in defaults]
    newest = max(created for created, _ in ranked)
    return min(name for created, name in ranked if created == newest)


def _has_class(claim: Obj) -> bool:
    annotations = (claim.get("metadata") or {}).get("annotations") or {}
    spec = claim.get("spec") or {}
    return _BETA_CLASS_ANNOTATION in annotations or spec.get("storageClassName") is not None


class DefaultStorageClass(Plugin):
    """The plugin: PersistentVolumeClaim creates."""

    name = "DefaultStorageClass"

    def admit(self, a: Attributes) -> None:
        resource = a.resource
        if a.operation != "CREATE" or a.subresource:
            return
        if resource.group != "" or resource.kind != "PersistentVolumeClaim":
            return
        if _has_class(a.obj):
            return
        chosen = default_class(a.store)
        if chosen is not None:
            a.obj.setdefault("spec", {})["storageClassName"] = chosen
