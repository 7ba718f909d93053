"""The PersistentVolume binder: static binding, pre-binding, waiting claims and reclaim.

Snapshots after claims change wait out a resync of the Go binder (:data:`SYNCED`); its events
repeat on every resync and are counted once (``snapshot._RESYNCED_EVENTS``).

The Go manager has no provisioner, so the volumes are static (``hostPath`` or ``csi`` with a
made-up driver) and classes name an external provisioner nobody runs. Volumes and classes are
cluster objects: each scenario's have names (``df-pv-...``) and classes of their own, so no
other scenario's claim binds to them; every scenario deletes its claims before it ends, so its
volumes are not Bound (and can go) when the harness deletes them.
"""

from __future__ import annotations

from typing import Any

from ..scenario import Create, Delete, Scenario, Settle

KINDS = ("persistentvolumeclaims", "persistentvolumes", "events")
SYNCED = Settle(quiet=16.0, timeout=90.0, replay_quiet=2.0)
"""A snapshot after a resync of the Go binder (every 15 s): its claim and volume workers race
on a volume's status, and the loser of a conflict waits for the next resync; kcm has no such
race, so its window is the default one."""
EXTERNAL = "example.com/external"


def volume(
    name: str,
    size: str,
    storage_class: str,
    *,
    policy: str = "Retain",
    claim: str | None = None,
    source: dict[str, Any] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "capacity": {"storage": size},
        "accessModes": ["ReadWriteOnce"],
        "persistentVolumeReclaimPolicy": policy,
        "storageClassName": storage_class,
        **(source or {"hostPath": {"path": f"/data/{name}"}}),
    }
    if claim is not None:
        spec["claimRef"] = {"namespace": "$ns", "name": claim}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": spec,
    }


def claim(
    name: str, storage_class: str, size: str = "1Gi", volume_name: str | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "storageClassName": storage_class,
        "resources": {"requests": {"storage": size}},
    }
    if volume_name is not None:
        spec["volumeName"] = volume_name
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": spec,
    }


def storage_class(name: str, mode: str) -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": EXTERNAL,
        "volumeBindingMode": mode,
    }


def deleted(*claims: str) -> tuple[Delete, ...]:
    return tuple(Delete("persistentvolumeclaims", name) for name in claims)


SCENARIOS = [
    Scenario(
        "persistentvolume/static-bind-smallest-fit",
        (
            Create(volume("df-pv-fit-small", "500Mi", "df-pv-fit")),
            Create(volume("df-pv-fit-big", "5Gi", "df-pv-fit")),
            Create(volume("df-pv-fit-just", "2Gi", "df-pv-fit")),
            Create(volume("df-pv-fit-other-class", "1Gi", "df-pv-fit-other")),
            Settle(),
            Create(claim("data", "df-pv-fit")),
            SYNCED,
            *deleted("data"),
            SYNCED,
        ),
        kinds=KINDS,
        doc="The claim binds the smallest volume of its class that is big enough; deleting the "
        "claim releases the (Retain) volume.",
    ),
    Scenario(
        "persistentvolume/pre-bound-volume-and-claim",
        (
            Create(volume("df-pv-pre-wanted", "1Gi", "df-pv-pre", claim="wanted")),
            Create(volume("df-pv-pre-named", "1Gi", "df-pv-pre")),
            Settle(),
            Create(claim("wanted", "df-pv-pre")),
            Create(claim("named", "df-pv-pre", volume_name="df-pv-pre-named")),
            SYNCED,
            Create(claim("late", "df-pv-pre", volume_name="df-pv-pre-named")),
            SYNCED,
            *deleted("wanted", "named", "late"),
            SYNCED,
        ),
        kinds=KINDS,
        doc="A volume pre-bound to a claim and a claim naming its volume bind without the "
        "controller's marks on that side; a second claim for a taken volume waits.",
    ),
    Scenario(
        "persistentvolume/no-match-failed-binding",
        (
            Create(volume("df-pv-nomatch-small", "1Gi", "df-pv-nomatch")),
            Create(claim("big", "df-pv-nomatch", size="5Gi")),
            Create(claim("classless", "")),
            SYNCED,
            *deleted("big", "classless"),
            SYNCED,
        ),
        kinds=KINDS,
        doc="A claim no volume fits stays Pending; one without a class gets FailedBinding.",
    ),
    Scenario(
        "persistentvolume/external-provisioner-and-first-consumer",
        (
            Create(storage_class("df-pv-ext-now", "Immediate")),
            Create(storage_class("df-pv-ext-later", "WaitForFirstConsumer")),
            Settle(),
            Create(claim("eager", "df-pv-ext-now")),
            Create(claim("patient", "df-pv-ext-later")),
            SYNCED,
            *deleted("eager", "patient"),
            SYNCED,
        ),
        kinds=("persistentvolumeclaims", "events"),
        doc="An Immediate claim is handed to its class's external provisioner (annotations, "
        "ExternalProvisioning); a WaitForFirstConsumer one waits for a pod.",
    ),
    Scenario(
        "persistentvolume/reclaim-retain-and-delete-without-deleter",
        (
            Create(volume("df-pv-reclaim-kept", "1Gi", "df-pv-reclaim")),
            Create(volume("df-pv-reclaim-host", "1Gi", "df-pv-reclaim", policy="Delete")),
            Create(
                volume(
                    "df-pv-reclaim-csi",
                    "1Gi",
                    "df-pv-reclaim",
                    policy="Delete",
                    source={"csi": {"driver": "example.com", "volumeHandle": "h-1"}},
                )
            ),
            Create(claim("kept", "df-pv-reclaim", volume_name="df-pv-reclaim-kept")),
            Create(claim("host", "df-pv-reclaim", volume_name="df-pv-reclaim-host")),
            Create(claim("csi", "df-pv-reclaim", volume_name="df-pv-reclaim-csi")),
            SYNCED,
            *deleted("kept", "host", "csi"),
            SYNCED,
        ),
        kinds=KINDS,
        doc="After their claims go, a Retain volume is Released; Delete volumes no deleter "
        "handles (hostPath outside /tmp, a CSI volume nobody provisioned) fail.",
    ),
]
