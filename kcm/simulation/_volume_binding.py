"""The simulated scheduler's volume binder: kube-scheduler's ``VolumeBinding`` plugin, small.

A pod whose claims are missing, being deleted, or unbound with Immediate binding is not
scheduled at all (kube's PreFilter answers). On a node, a bound claim's volume must allow the
node (its ``nodeAffinity``), and an unbound WaitForFirstConsumer claim needs an Available
volume of its class that fits the node, or a class that can provision (any provisioner but
``kubernetes.io/no-provisioner``); once a claim has a ``volume.kubernetes.io/selected-node``
only that node will do. After the node is chosen, such a claim is bound to the matching
volume (``claimRef``, as the scheduler's binder does, for the PV binder to finish) or
annotated with the selected node (for the provisioner); the pod is bound once every claim is.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import msgspec

from kcm.client import ApiClient
from kcm.controllerkit import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    claim_class,
    pod_pvc_keys,
    volume_class,
    volume_fits_node,
)
from kcm.informers import Lister
from kcm.models import parse_quantity
from kcm.models.core_v1 import Node, PersistentVolume, PersistentVolumeClaim, Pod
from kcm.models.storage_v1 import StorageClass
from kcm.record import object_reference

__all__ = [
    "AFFINITY_CONFLICT",
    "NO_VOLUMES",
    "UNBOUND_IMMEDIATE",
    "VolumeBinder",
]

UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
AFFINITY_CONFLICT = "node(s) had volume node affinity conflict"
NO_VOLUMES = "node(s) didn't find available persistent volumes to bind"
_NO_PROVISIONER = "kubernetes.io/no-provisioner"


def _storage(value: Any) -> Decimal:
    return parse_quantity(value) if value is not None else Decimal(0)


def _is_bound(claim: PersistentVolumeClaim) -> bool:
    return bool(claim.spec and claim.spec.volume_name)


class VolumeBinder:
    """Answers the scheduler's volume questions from the informers' listers and makes the
    binding writes (see the module docstring)."""

    def __init__(
        self,
        client: ApiClient,
        claims: Lister[PersistentVolumeClaim],
        volumes: Lister[PersistentVolume],
        classes: Lister[StorageClass],
    ) -> None:
        self._client = client
        self._claims = claims
        self._volumes = volumes
        self._classes = classes

    def _pod_claims(self, pod: Pod) -> list[tuple[str, PersistentVolumeClaim | None]]:
        found = []
        for key in pod_pvc_keys(pod):
            namespace, name = key.split("/", 1)
            found.append((name, self._claims.get_or_none(namespace, name)))
        return found

    def _delayed(self, claim: PersistentVolumeClaim) -> bool:
        found = self._classes.get_or_none(None, claim_class(claim)) if claim_class(claim) else None
        return found is not None and found.volume_binding_mode == "WaitForFirstConsumer"

    def pre_filter(self, pod: Pod) -> str | None:
        """Why no node can take ``pod`` now, or None."""
        for name, claim in self._pod_claims(pod):
            if claim is None:
                return f'persistentvolumeclaim "{name}" not found'
            if claim.metadata.deletion_timestamp is not None:
                return f'persistentvolumeclaim "{name}" is being deleted'
            if not _is_bound(claim) and not self._delayed(claim):
                return UNBOUND_IMMEDIATE
        return None

    def filter(self, pod: Pod, node: Node) -> str | None:
        """Why ``node`` cannot take ``pod``'s volumes, or None."""
        for _, claim in self._pod_claims(pod):
            if claim is None:
                continue
            bound_to = claim.spec.volume_name if claim.spec else None
            if bound_to:
                volume = self._volumes.get_or_none(None, bound_to)
                if volume is not None and not volume_fits_node(volume, node):
                    return AFFINITY_CONFLICT
                continue
            selected = (claim.metadata.annotations or {}).get(ANN_SELECTED_NODE)
            if selected and selected != node.metadata.name:
                return AFFINITY_CONFLICT
            if self._static_match(claim, node) is None and not self._can_provision(claim):
                return NO_VOLUMES
        return None

    def _can_provision(self, claim: PersistentVolumeClaim) -> bool:
        found = self._classes.get_or_none(None, claim_class(claim))
        return (
            found is not None and bool(found.provisioner) and found.provisioner != _NO_PROVISIONER
        )

    def _static_match(self, claim: PersistentVolumeClaim, node: Node) -> PersistentVolume | None:
        """The smallest Available volume of the claim's class, modes and size on ``node``."""
        spec = claim.spec
        if spec is None:
            return None
        wanted = set(spec.access_modes or ())
        requests = (spec.resources.requests if spec.resources else None) or {}
        requested = _storage(requests.get("storage"))
        best: tuple[Decimal, str] | None = None
        chosen = None
        for volume in self._volumes.list():
            vspec = volume.spec
            if vspec is None or (volume.status.phase if volume.status else None) != "Available":
                continue
            if vspec.claim_ref is not None or volume.metadata.deletion_timestamp is not None:
                continue
            if volume_class(volume) != claim_class(claim) or not wanted <= set(
                vspec.access_modes or ()
            ):
                continue
            if (vspec.volume_mode or "Filesystem") != (spec.volume_mode or "Filesystem"):
                continue
            size = _storage((vspec.capacity or {}).get("storage"))
            if size < requested or not volume_fits_node(volume, node):
                continue
            rank = (size, volume.metadata.name or "")
            if best is None or rank < best:
                best, chosen = rank, volume
        return chosen

    async def bind_claims(self, pod: Pod, node: Node) -> bool:
        """Bind or annotate ``pod``'s unbound claims for ``node``; whether every claim is now
        fully bound (the pod may be bound)."""
        ready = True
        for _, claim in self._pod_claims(pod):
            if claim is None:
                return False
            if _is_bound(claim):
                ready = ready and ANN_BIND_COMPLETED in (claim.metadata.annotations or {})
                continue
            ready = False
            volume = self._static_match(claim, node)
            if volume is not None:
                await self._bind_volume(volume, claim)
            elif (claim.metadata.annotations or {}).get(ANN_SELECTED_NODE) != node.metadata.name:
                annotations = dict(claim.metadata.annotations or {})
                annotations[ANN_SELECTED_NODE] = node.metadata.name or ""
                new = msgspec.structs.replace(
                    claim, metadata=msgspec.structs.replace(claim.metadata, annotations=annotations)
                )
                api: Any = self._client.api(PersistentVolumeClaim, claim.metadata.namespace)
                await api.update(claim, new)
        return ready

    async def _bind_volume(self, volume: PersistentVolume, claim: PersistentVolumeClaim) -> None:
        assert volume.spec is not None
        annotations = dict(volume.metadata.annotations or {})
        annotations.setdefault(ANN_BOUND_BY_CONTROLLER, "yes")
        ref = object_reference(claim)
        new = msgspec.structs.replace(
            volume,
            metadata=msgspec.structs.replace(volume.metadata, annotations=annotations),
            spec=msgspec.structs.replace(volume.spec, claim_ref=ref),
        )
        api: Any = self._client.api(PersistentVolume)
        await api.update(volume, new)
