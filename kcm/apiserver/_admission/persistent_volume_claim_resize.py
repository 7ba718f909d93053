"""``PersistentVolumeClaimResize``: a claim may grow only when it is bound and its
StorageClass says ``allowVolumeExpansion: true``.

An update (not a subresource) that raises ``spec.resources.requests.storage`` of a claim that
was not Bound, or whose class (the same before and after) is missing or does not allow
expansion, is a 403 with kube's text. Shrinking is the kind's validation's business.
"""

from __future__ import annotations

from decimal import Decimal

from kcm.models import parse_quantity

from .._status import StatusError
from .._store import Obj
from ._plugin import Attributes, Plugin

__all__ = ["PersistentVolumeClaimResize"]


def _storage(claim: Obj) -> Decimal:
    requests = ((claim.get("spec") or {}).get("resources") or {}).get("requests") or {}
    try:
        return parse_quantity(requests.get("storage") or 0)
    except ValueError:
        return Decimal(0)  # the kind's validation refuses it


def _class(claim: Obj) -> str:
    """kube's ``GetPersistentVolumeClaimClass``: the beta annotation, else the field."""
    annotation = ((claim.get("metadata") or {}).get("annotations") or {}).get(
        "volume.beta.kubernetes.io/storage-class"
    )
    if annotation is not None:
        return str(annotation)
    return str((claim.get("spec") or {}).get("storageClassName") or "")


class PersistentVolumeClaimResize(Plugin):
    """The plugin: PVC updates that grow the storage request."""

    name = "PersistentVolumeClaimResize"

    def validate(self, a: Attributes) -> None:
        if a.resource.group != "" or a.resource.plural != "persistentvolumeclaims":
            return
        if a.subresource or a.operation != "UPDATE" or a.old is None:
            return
        if _storage(a.obj) <= _storage(a.old):
            return
        if ((a.old.get("status") or {}).get("phase")) != "Bound":
            why = "Only bound persistent volume claims can be expanded"
        elif not self._allowed(a):
            why = (
                "only dynamically provisioned pvc can be resized and the storageclass that "
                "provisions the pvc must support resize"
            )
        else:
            return
        raise StatusError.forbidden("", "persistentvolumeclaims", a.name, why)

    def _allowed(self, a: Attributes) -> bool:
        assert a.old is not None
        name, before = _class(a.obj), _class(a.old)
        if not name or not before or name != before:
            return False
        for storage_class in a.store.items(("storage.k8s.io", "storageclasses")):
            if storage_class["metadata"]["name"] == name:
                return storage_class.get("allowVolumeExpansion") is True
        return False
