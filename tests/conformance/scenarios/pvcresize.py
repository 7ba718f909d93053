"""Growing and shrinking a PersistentVolumeClaim: the PersistentVolumeClaimResize admission
plugin (a bound claim grows only if its StorageClass allows expansion) and the claim's update
validation (no shrinking). No binder runs: a claim is made Bound through ``/status``."""

from __future__ import annotations

from typing import Any

from ..scenario import Http, Scenario

PVCS = "/api/v1/namespaces/$ns/persistentvolumeclaims"
CLASSES = "/apis/storage.k8s.io/v1/storageclasses"
MERGE = "merge"


def _class(name: str, expand: bool | None) -> Http:
    body: dict[str, Any] = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": "example.com/resize",
    }
    if expand is not None:
        body["allowVolumeExpansion"] = expand
    return Http("POST", CLASSES, body, keep=("allowVolumeExpansion",))


def _bound_claim(storage_class: str | None, size: str = "1Gi") -> tuple[Http, ...]:
    spec: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": size}},
        "volumeName": "pv-elsewhere",
    }
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    return (
        Http("POST", PVCS, {"metadata": {"name": "c"}, "spec": spec}, keep=("spec.resources",)),
        Http(
            "PATCH",
            f"{PVCS}/c/status",
            {"status": {"phase": "Bound", "capacity": {"storage": size}}},
            content_type=MERGE,
            keep=("status.phase",),
        ),
    )


def _resize(size: str) -> Http:
    return Http(
        "PATCH",
        f"{PVCS}/c",
        {"spec": {"resources": {"requests": {"storage": size}}}},
        content_type=MERGE,
        keep=("spec.resources",),
    )


SCENARIOS = [
    Scenario(
        "pvcresize/class-allows-expansion",
        (_class("pvcresize-grows", True), *_bound_claim("pvcresize-grows"), _resize("2Gi")),
        "a bound claim of a class with allowVolumeExpansion grows",
    ),
    Scenario(
        "pvcresize/class-without-expansion-403",
        (_class("pvcresize-fixed", None), *_bound_claim("pvcresize-fixed"), _resize("2Gi")),
        "a class without allowVolumeExpansion: 403 from PersistentVolumeClaimResize",
    ),
    Scenario(
        "pvcresize/class-refusing-expansion-403",
        (_class("pvcresize-refuses", False), *_bound_claim("pvcresize-refuses"), _resize("2Gi")),
        "allowVolumeExpansion false: 403",
    ),
    Scenario(
        "pvcresize/no-class-403",
        (*_bound_claim(""), _resize("2Gi")),
        "a bound claim without a class cannot grow",
    ),
    Scenario(
        "pvcresize/missing-class-403",
        (*_bound_claim("pvcresize-nowhere"), _resize("2Gi")),
        "a bound claim whose class does not exist cannot grow",
    ),
    Scenario(
        "pvcresize/shrink-422",
        (
            _class("pvcresize-shrinks", True),
            *_bound_claim("pvcresize-shrinks", "2Gi"),
            _resize("1Gi"),
        ),
        "a bound claim cannot shrink (validation, before admission)",
    ),
    Scenario(
        "pvcresize/same-size-passes",
        (_class("pvcresize-same", None), *_bound_claim("pvcresize-same"), _resize("1024Mi")),
        "the same size written differently is not growing",
    ),
]
