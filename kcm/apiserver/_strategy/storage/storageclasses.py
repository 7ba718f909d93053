"""StorageClasses: defaults (reclaim policy Delete, binding mode Immediate), a qualified
provisioner name, and a class fixed once created but for its metadata, allowed topologies,
mount options and whether volumes may expand."""

from __future__ import annotations

from typing import Any, Final

from kcm.selectors import label_key_errors

from ..._field_errors import Cause, forbidden, invalid, not_supported, required, too_long
from ..._store import Obj
from .._base import Strategy

__all__ = ["StorageClassStrategy"]

_RECLAIM_POLICIES: Final = ["Delete", "Retain"]
_BINDING_MODES: Final = ["Immediate", "WaitForFirstConsumer"]
_MAX_PARAMETERS: Final = 512


class StorageClassStrategy(Strategy):
    """kube-apiserver's ``pkg/registry/storage/storageclass``."""

    return_deleted_object = True

    def default(self, obj: Obj) -> None:
        obj.setdefault("reclaimPolicy", "Delete")
        obj.setdefault("volumeBindingMode", "Immediate")

    def validate(self, obj: Obj) -> list[Cause]:
        return super().validate(obj) + _validate_class(obj)

    def validate_update(self, new: Obj, old: Obj) -> list[Cause]:
        causes = self.validate_metadata_update(new, old)
        if (new.get("parameters") or {}) != (old.get("parameters") or {}):
            causes.append(forbidden("parameters", "updates to parameters are forbidden."))
        if new.get("provisioner") != old.get("provisioner"):
            causes.append(forbidden("provisioner", "updates to provisioner are forbidden."))
        if new.get("reclaimPolicy") != old.get("reclaimPolicy"):
            causes.append(forbidden("reclaimPolicy", "updates to reclaimPolicy are forbidden."))
        mode = new.get("volumeBindingMode")
        if mode != old.get("volumeBindingMode"):
            causes.append(invalid("volumeBindingMode", mode, "field is immutable"))
        return causes


def _validate_class(obj: Obj) -> list[Cause]:
    """``ValidateStorageClass`` without the topology rules."""
    causes: list[Cause] = []
    provisioner: Any = obj.get("provisioner") or ""
    if not provisioner:
        causes.append(required("provisioner", ""))
    else:
        causes += [
            invalid("provisioner", provisioner.lower(), m)
            for m in label_key_errors(provisioner.lower())
        ]
    parameters = obj.get("parameters") or {}
    if len(parameters) > _MAX_PARAMETERS:
        causes.append(too_long("parameters", _MAX_PARAMETERS))
    else:
        causes += [
            invalid("parameters", key, "field can not be empty.") for key in parameters if not key
        ]
    policy = obj.get("reclaimPolicy")
    if policy and policy not in _RECLAIM_POLICIES:
        causes.append(not_supported("reclaimPolicy", policy, _RECLAIM_POLICIES))
    mode = obj.get("volumeBindingMode")
    if mode is None:
        causes.append(required("volumeBindingMode", ""))
    elif mode not in _BINDING_MODES:
        causes.append(not_supported("volumeBindingMode", mode, _BINDING_MODES))
    return causes
