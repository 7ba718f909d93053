"""StorageClasses, PersistentVolumes and claims: defaults, validation and what an update may
change, and the DefaultStorageClass admission plugin."""

from __future__ import annotations

from typing import Any

from ..scenario import Http, Scenario

SC = "/apis/storage.k8s.io/v1/storageclasses"
PV = "/api/v1/persistentvolumes"
PVC = "/api/v1/namespaces/$ns/persistentvolumeclaims"
MERGE = "application/merge-patch+json"


def storage_class(name: str, **fields: Any) -> dict[str, Any]:
    meta = {"name": name, **fields.pop("meta", {})}
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": meta, **fields}


def volume(name: str, **spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"]}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {**base, **spec},
    }


def claim(name: str, **spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "1Gi"}},
    }
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": {**base, **spec},
    }


def merge(path: str, body: Any, **kw: Any) -> Http:
    return Http("PATCH", path, body, content_type=MERGE, **kw)


CLASS_KEEP = ("provisioner", "reclaimPolicy", "volumeBindingMode", "allowVolumeExpansion")
PV_KEEP = ("spec", "status")

SCENARIOS = [
    Scenario(
        "storage/storageclass-defaults-and-immutability",
        (
            Http(
                "POST",
                SC,
                storage_class("cf-storage-sc", provisioner="example.com/disks"),
                keep=CLASS_KEEP,
            ),
            merge(f"{SC}/cf-storage-sc", {"provisioner": "example.com/other"}),
            merge(f"{SC}/cf-storage-sc", {"reclaimPolicy": "Retain"}),
            merge(f"{SC}/cf-storage-sc", {"volumeBindingMode": "WaitForFirstConsumer"}),
            merge(f"{SC}/cf-storage-sc", {"parameters": {"type": "fast"}}),
            merge(f"{SC}/cf-storage-sc", {"allowVolumeExpansion": True}, keep=CLASS_KEEP),
            Http(
                "POST",
                SC,
                storage_class(
                    "cf-storage-sc-bad",
                    provisioner="",
                    reclaimPolicy="Recycle",
                    volumeBindingMode="Later",
                ),
            ),
            Http("POST", SC, storage_class("cf-storage-sc-slash", provisioner="a/b/c")),
            Http("DELETE", f"{SC}/cf-storage-sc", keep=("metadata.name",)),
        ),
        "a class defaults to Delete and Immediate; provisioner, parameters, reclaim policy and "
        "binding mode are fixed",
        namespace=False,
    ),
    Scenario(
        "storage/persistentvolume-defaults-and-validation",
        (
            Http(
                "POST",
                PV,
                {
                    **volume("cf-storage-pv", hostPath={"path": "/data/x"}),
                    "status": {"phase": "Bound"},
                },
                keep=PV_KEEP,
            ),
            Http("POST", PV, volume("cf-storage-pv-none")),
            Http(
                "POST",
                PV,
                volume(
                    "cf-storage-pv-two", hostPath={"path": "/x"}, nfs={"server": "s", "path": "/p"}
                ),
            ),
            Http("POST", PV, volume("cf-storage-pv-csi", csi={"driver": "kcm.dev/simulated"})),
            Http(
                "POST",
                PV,
                {
                    **volume("cf-storage-pv-empty", hostPath={"path": "/x"}),
                    "spec": {"hostPath": {"path": "/x"}},
                },
            ),
            Http(
                "POST",
                PV,
                volume(
                    "cf-storage-pv-policy",
                    hostPath={"path": "/x"},
                    persistentVolumeReclaimPolicy="Keep",
                ),
            ),
            merge(f"{PV}/cf-storage-pv", {"spec": {"volumeMode": "Block"}}),
            merge(
                f"{PV}/cf-storage-pv",
                {"spec": {"capacity": {"storage": "2Gi"}}},
                keep=("spec.capacity",),
            ),
            Http("DELETE", f"{PV}/cf-storage-pv", keep=("metadata.name",)),
        ),
        "a volume defaults to Retain, Filesystem and phase Pending; needs modes, a capacity and "
        "one source, a CSI driver name is a DNS subdomain; the source and mode are fixed",
        namespace=False,
    ),
    Scenario(
        "storage/claim-volume-name-may-be-set",
        (
            Http("POST", PVC, claim("c", storageClassName=""), keep=("spec", "status")),
            merge(f"{PVC}/c", {"spec": {"volumeName": "somewhere"}}, keep=("spec.volumeName",)),
        ),
        "a claim's volume name may be set once",
    ),
    Scenario(
        "storage/persistentvolume-source-change-422",
        (
            Http(
                "POST",
                PV,
                volume("cf-storage-pv-src", hostPath={"path": "/data/x"}),
                keep=("metadata.name",),
            ),
            merge(f"{PV}/cf-storage-pv-src", {"spec": {"hostPath": {"path": "/data/y"}}}),
            Http("DELETE", f"{PV}/cf-storage-pv-src", keep=("metadata.name",)),
        ),
        "a volume's source is fixed once created",
        namespace=False,
    ),
    Scenario(
        "storage/claim-spec-change-422",
        (
            Http("POST", PVC, claim("c", storageClassName=""), keep=("metadata.name",)),
            merge(f"{PVC}/c", {"spec": {"storageClassName": "other"}}),
        ),
        "a claim's spec may not change but for its request (bound) and its volume name",
    ),
    Scenario(
        "storage/default-storage-class-admission",
        (
            Http(
                "POST",
                SC,
                storage_class(
                    "cf-storage-default",
                    provisioner="example.com/disks",
                    meta={"annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
                ),
                keep=("metadata.name",),
            ),
            Http("POST", PVC, claim("unnamed"), keep=("spec.storageClassName",)),
            Http("POST", PVC, claim("none", storageClassName=""), keep=("spec.storageClassName",)),
            Http(
                "POST", PVC, claim("named", storageClassName="x"), keep=("spec.storageClassName",)
            ),
            Http("DELETE", f"{SC}/cf-storage-default", keep=("metadata.name",)),
        ),
        "a claim without a class gets the default one; an empty or named class is kept",
    ),
]
