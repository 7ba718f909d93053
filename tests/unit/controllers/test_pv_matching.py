"""Which volume a claim gets, why a named volume does not fit, and who deletes a released
volume: the PV binder's pure rules."""

from __future__ import annotations

import pytest

from kcm.controllers.persistentvolume import deleter_for, find_best_match
from kcm.controllers.persistentvolume import why_volume_does_not_satisfy as why_not
from kcm.models import LabelSelector
from kcm.models.core_v1 import (
    CSIPersistentVolumeSource,
    HostPathVolumeSource,
    ObjectReference,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeClaimSpec,
    PersistentVolumeSpec,
    PersistentVolumeStatus,
    VolumeResourceRequirements,
)
from kcm.models.meta_v1 import ObjectMeta


def volume(
    name: str,
    size: str = "1Gi",
    *,
    modes: tuple[str, ...] = ("ReadWriteOnce",),
    storage_class: str = "",
    phase: str = "Available",
    labels: dict[str, str] | None = None,
    claim_ref: ObjectReference | None = None,
    mode: str | None = None,
    annotations: dict[str, str] | None = None,
    host_path: str | None = "/data/x",
) -> PersistentVolume:
    return PersistentVolume(
        metadata=ObjectMeta(name=name, labels=labels, annotations=annotations),
        spec=PersistentVolumeSpec(
            capacity={"storage": size},
            access_modes=list(modes),
            storage_class_name=storage_class,
            claim_ref=claim_ref,
            volume_mode=mode,
            host_path=HostPathVolumeSource(path=host_path) if host_path else None,
            csi=None if host_path else CSIPersistentVolumeSource(driver="d.io", volume_handle="h"),
        ),
        status=PersistentVolumeStatus(phase=phase),
    )


def claim(
    size: str = "1Gi",
    *,
    modes: tuple[str, ...] = ("ReadWriteOnce",),
    storage_class: str = "",
    selector: dict[str, str] | None = None,
    mode: str | None = None,
) -> PersistentVolumeClaim:
    return PersistentVolumeClaim(
        metadata=ObjectMeta(name="data", namespace="ns", uid="u-1"),
        spec=PersistentVolumeClaimSpec(
            access_modes=list(modes),
            resources=VolumeResourceRequirements(requests={"storage": size}),
            storage_class_name=storage_class,
            selector=LabelSelector(match_labels=selector) if selector else None,
            volume_mode=mode,
        ),
    )


def best(c: PersistentVolumeClaim, *volumes: PersistentVolume, delay: bool = False) -> str | None:
    found = find_best_match(c, volumes, delay_binding=delay)
    return found.metadata.name if found else None


def test_the_smallest_available_volume_big_enough_wins() -> None:
    volumes = (volume("small", "500Mi"), volume("big", "10Gi"), volume("fit", "2Gi"))
    assert best(claim("1Gi"), *volumes) == "fit"
    assert best(claim("20Gi"), *volumes) is None


def test_volumes_with_fewer_access_modes_are_searched_first() -> None:
    wide = volume("wide", "1Gi", modes=("ReadWriteOnce", "ReadOnlyMany"))
    narrow = volume("narrow", "5Gi")
    assert best(claim(), wide, narrow) == "narrow"  # its group is searched first
    assert best(claim(modes=("ReadOnlyMany",)), wide, narrow) == "wide"


@pytest.mark.parametrize(
    ("candidate", "reason"),
    [
        (volume("bound", phase="Bound"), "not Available"),
        (volume("classy", storage_class="fast"), "another class"),
        (volume("block", mode="Block"), "another volume mode"),
        (volume("unlabelled"), "the selector does not match"),
        (
            volume("taken", claim_ref=ObjectReference(namespace="ns", name="other")),
            "pre-bound to another claim",
        ),
    ],
)
def test_volumes_that_do_not_match_are_skipped(candidate: PersistentVolume, reason: str) -> None:
    c = claim(selector={"tier": "db"}) if reason.startswith("the selector") else claim()
    assert best(c, candidate) is None, reason


def test_a_volume_pre_bound_to_the_claim_wins_even_under_wait_for_first_consumer() -> None:
    ref = ObjectReference(namespace="ns", name="data")
    pre = volume("pre", "10Gi", claim_ref=ref, phase="Available")
    assert best(claim(), volume("fit"), pre) == "pre"
    assert best(claim(), volume("fit"), pre, delay=True) == "pre"
    assert best(claim(), volume("fit"), delay=True) is None
    wrong_uid = volume("old", claim_ref=ObjectReference(namespace="ns", name="data", uid="u-0"))
    assert best(claim(), wrong_uid) is None


def test_why_a_named_volume_does_not_fit() -> None:
    assert why_not(volume("v", "1Gi"), claim("1Gi")) is None
    assert why_not(volume("v", "500Mi"), claim("1Gi")) == "requested PV is too small"
    assert why_not(volume("v", storage_class="x"), claim()) == "storageClassName does not match"
    assert why_not(volume("v", mode="Block"), claim()) == "incompatible volumeMode"
    assert why_not(volume("v"), claim(modes=("ReadWriteMany",))) == "incompatible accessMode"


def test_who_deletes_a_released_volume() -> None:
    external = volume("ext", annotations={"pv.kubernetes.io/provisioned-by": "example.com/x"})
    assert deleter_for(external).external
    assert deleter_for(volume("tmp", host_path="/tmp/vol")).failure is None
    assert deleter_for(volume("data", host_path="/data/vol")).failure == (
        "host_path deleter only supports /tmp/.+ but received provided /data/vol"
    )
    assert deleter_for(volume("csi", host_path=None)).failure == (
        'error getting deleter volume plugin for volume "csi": no deletable volume plugin matched'
    )
