"""PersistentVolumes: defaults (phase Pending, reclaim policy Retain, ``volumeMode:
Filesystem``), the status reset on create, and the basic rules of
``ValidatePersistentVolumeSpec``: access modes, a storage capacity, exactly one volume source
(a CSI one with a valid driver name and a handle), a supported reclaim policy; once created the
source and volume mode are fixed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..._field_errors import Cause, forbidden, invalid, not_supported, required, too_long
from ..._names import dns1123_subdomain
from ..._store import Obj
from .._base import Strategy
from .._spec_diff import spec_diff

__all__ = ["PersistentVolumeStrategy", "csi_driver_name_causes"]

_ACCESS_MODES: Final = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]
_RECLAIM_POLICIES: Final = ["Delete", "Recycle", "Retain"]
_SOURCES: Final = (
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "glusterfs",
    "flocker",
    "nfs",
    "rbd",
    "quobyte",
    "cephfs",
    "iscsi",
    "cinder",
    "fc",
    "flexVolume",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "scaleIO",
    "local",
    "storageos",
    "csi",
)
"""The volume sources in the order kube-apiserver checks them."""


class PersistentVolumeStrategy(Strategy):
    """kube-apiserver's ``pkg/registry/core/persistentvolume``."""

    def default(self, obj: Obj) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            spec = obj["spec"] = {}
        spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
        spec.setdefault("volumeMode", "Filesystem")
        if isinstance(spec.get("hostPath"), dict):
            spec["hostPath"].setdefault("type", "")
        status = obj.get("status")
        if not isinstance(status, dict):
            status = obj["status"] = {}
        if not status.get("phase"):
            status["phase"] = "Pending"

    def validate(self, obj: Obj) -> list[Cause]:
        return super().validate(obj) + _validate_spec(obj.get("spec") or {})

    def validate_update(self, new: Obj, old: Obj) -> list[Cause]:
        causes = self.validate_metadata_update(new, old) + self.validate(new)
        spec, before = new.get("spec") or {}, old.get("spec") or {}
        if _source(spec) != _source(before):
            diff = "\n".join(spec_diff(_source(before), _source(spec)))
            causes.append(
                forbidden(
                    "spec.persistentvolumesource",
                    f"spec.persistentvolumesource is immutable after creation\n{diff}\n",
                )
            )
        if spec.get("volumeMode") != before.get("volumeMode"):
            causes.append(invalid("volumeMode", spec.get("volumeMode"), "field is immutable"))
        return causes


def _source(spec: Mapping[str, Any]) -> dict[str, Any]:
    return {key: spec[key] for key in _SOURCES if spec.get(key) is not None}


def _validate_spec(spec: Mapping[str, Any]) -> list[Cause]:
    causes: list[Cause] = []
    modes = spec.get("accessModes") or []
    if not modes:
        causes.append(required("spec.accessModes"))
    causes += [
        not_supported("spec.accessModes", m, _ACCESS_MODES) for m in modes if m not in _ACCESS_MODES
    ]
    if "ReadWriteOncePod" in modes and any(m != "ReadWriteOncePod" for m in modes):
        causes.append(
            forbidden("spec.accessModes", "may not use ReadWriteOncePod with other access modes")
        )
    capacity = spec.get("capacity") or {}
    if not capacity:
        causes.append(required("spec.capacity"))
    if not capacity:
        causes.append(
            {
                "reason": "FieldValueNotSupported",
                "message": 'Unsupported value: core.ResourceList(nil): supported values: "storage"',
                "field": "spec.capacity",
            }
        )
    elif "storage" not in capacity or len(capacity) > 1:
        causes.append(not_supported("spec.capacity", capacity, ["storage"]))
    policy = spec.get("persistentVolumeReclaimPolicy")
    if policy and policy not in _RECLAIM_POLICIES:
        causes.append(
            not_supported("spec.persistentVolumeReclaimPolicy", policy, _RECLAIM_POLICIES)
        )
    sources = [key for key in _SOURCES if spec.get(key) is not None]
    causes += [
        forbidden(f"spec.{key}", "may not specify more than 1 volume type") for key in sources[1:]
    ]
    if not sources:
        causes.append(required("spec", "must specify a volume type"))
    if spec.get("csi") is not None:
        causes += _validate_csi(spec["csi"])
    return causes


def csi_driver_name_causes(path: str, driver: str) -> list[Cause]:
    """``ValidateCSIDriverName``: set, at most 63 characters, a DNS subdomain once lowercased."""
    causes: list[Cause] = []
    if not driver:
        causes.append(required(path))
    if len(driver) > 63:
        causes.append(too_long(path, 63))
    causes += [invalid(path, driver, m) for m in dns1123_subdomain(driver.lower())]
    return causes


def _validate_csi(csi: Mapping[str, Any]) -> list[Cause]:
    """``validateCSIPersistentVolumeSource``: the driver name and the handle."""
    causes = csi_driver_name_causes("spec.csi.driver", csi.get("driver") or "")
    if not csi.get("volumeHandle"):
        causes.append(required("spec.csi.volumeHandle"))
    return causes
