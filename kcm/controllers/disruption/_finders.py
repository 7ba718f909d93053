"""The scale of the controller that owns a pod (Go's ``podControllerFinder`` functions).

A budget counted against its pods' controllers asks, for each controller reference, the
finders in Go's order: ReplicationController, Deployment (through its ReplicaSet), ReplicaSet
(one no Deployment controls), StatefulSet, all from the informer caches, then any kind through
its ``/scale`` subresource (a custom resource). A finder answers the controller's UID and scale,
or nothing when the reference is not its kind or names an object that is gone (or another one
by that name).
"""

from __future__ import annotations

from dataclasses import dataclass

from kcm.client import ApiClient
from kcm.errors import NotFound
from kcm.informers import Lister
from kcm.models import Unstructured
from kcm.models.apps_v1 import Deployment, ReplicaSet, StatefulSet
from kcm.models.core_v1 import ReplicationController
from kcm.models.meta_v1 import OwnerReference
from kcm.runtime import get_controller_of

__all__ = ["ControllerFinders", "ControllerScale", "ScaleLookupError"]


class ScaleLookupError(Exception):
    """A controller's scale could not be found; the message is the one Go's finders give."""


@dataclass(frozen=True, slots=True)
class ControllerScale:
    """A pod's controller: its UID (controllers are counted once) and its ``spec.replicas``."""

    uid: str
    scale: int


def _group(api_version: str | None) -> str:
    """The group of an apiVersion (``schema.ParseGroupVersion``)."""
    text = api_version or ""
    if text.count("/") > 1:
        raise ScaleLookupError(f"unexpected GroupVersion string: {text}")
    return text.split("/", 1)[0] if "/" in text else ""


def _is(ref: OwnerReference, kind: str, groups: tuple[str, ...]) -> bool:
    """``verifyGroupKind``."""
    return ref.kind == kind and _group(ref.api_version) in groups


def _replicas(spec: object) -> int:
    replicas = getattr(spec, "replicas", None)
    return 1 if replicas is None else int(replicas)


class ControllerFinders:
    """Finds the scale of a pod's controller from the caches, else through ``/scale``.

    Args:
        client: reads ``/scale`` subresources and discovers custom kinds.
        replication_controllers, replica_sets, deployments, stateful_sets: listers.
    """

    def __init__(
        self,
        client: ApiClient,
        *,
        replication_controllers: Lister[ReplicationController],
        replica_sets: Lister[ReplicaSet],
        deployments: Lister[Deployment],
        stateful_sets: Lister[StatefulSet],
    ) -> None:
        self._client = client
        self._rcs = replication_controllers
        self._rss = replica_sets
        self._deployments = deployments
        self._sets = stateful_sets

    async def find(self, ref: OwnerReference, namespace: str) -> ControllerScale | None:
        """The first finder's answer for ``ref`` (None: no controller found).

        Raises:
            ScaleLookupError: the reference's kind is not served, does not implement
                ``/scale``, or the lookup failed (the message is Go's).
        """
        for finder in (self._rc, self._deployment, self._replica_set, self._stateful_set):
            found = finder(ref, namespace)
            if found is not None:
                return found
        return await self._scale(ref, namespace)

    def _rc(self, ref: OwnerReference, namespace: str) -> ControllerScale | None:
        if not _is(ref, "ReplicationController", ("",)):
            return None
        rc = self._rcs.get_or_none(namespace, ref.name or "")
        if rc is None or rc.metadata.uid != ref.uid:
            return None
        return ControllerScale(str(rc.metadata.uid), _replicas(rc.spec))

    def _owned_replica_set(self, ref: OwnerReference, namespace: str) -> ReplicaSet | None:
        if not _is(ref, "ReplicaSet", ("apps", "extensions")):
            return None
        rs = self._rss.get_or_none(namespace, ref.name or "")
        if rs is None or rs.metadata.uid != ref.uid:
            return None
        return rs

    def _deployment(self, ref: OwnerReference, namespace: str) -> ControllerScale | None:
        rs = self._owned_replica_set(ref, namespace)
        owner = get_controller_of(rs) if rs is not None else None
        if owner is None or not _is(owner, "Deployment", ("apps", "extensions")):
            return None
        deployment = self._deployments.get_or_none(namespace, owner.name or "")
        if deployment is None or deployment.metadata.uid != owner.uid:
            return None
        return ControllerScale(str(deployment.metadata.uid), _replicas(deployment.spec))

    def _replica_set(self, ref: OwnerReference, namespace: str) -> ControllerScale | None:
        rs = self._owned_replica_set(ref, namespace)
        if rs is None:
            return None
        owner = get_controller_of(rs)
        if owner is not None and owner.kind == "Deployment":
            return None  # counted through its Deployment
        return ControllerScale(str(rs.metadata.uid), _replicas(rs.spec))

    def _stateful_set(self, ref: OwnerReference, namespace: str) -> ControllerScale | None:
        if not _is(ref, "StatefulSet", ("apps",)):
            return None
        sts = self._sets.get_or_none(namespace, ref.name or "")
        if sts is None or sts.metadata.uid != ref.uid:
            return None
        return ControllerScale(str(sts.metadata.uid), _replicas(sts.spec))

    async def _scale(self, ref: OwnerReference, namespace: str) -> ControllerScale | None:
        """``getScaleController``: any kind through its ``/scale`` subresource."""
        api_version = ref.api_version or ""
        group = _group(api_version)
        version = api_version.split("/", 1)[1] if "/" in api_version else api_version
        try:
            info = await self._client.discover(api_version, ref.kind or "")
        except NotFound:
            raise ScaleLookupError(
                f'no matches for kind "{ref.kind}" in version "{group}/{version}"'
            ) from None
        resource = f"{info.plural}.{info.group}" if info.group else info.plural
        api = self._client.api(Unstructured, namespace, resource=info)
        try:
            scale = await api.get_scale(ref.name or "")
        except NotFound:
            # The object is gone, or its kind has no /scale (Go asks discovery which).
            if "scale" not in info.subresources:
                raise ScaleLookupError(
                    f"{resource} does not implement the scale subresource"
                ) from None
            return None
        if scale.metadata.uid != ref.uid:
            return None
        replicas = scale.spec.replicas if scale.spec is not None else None
        return ControllerScale(str(scale.metadata.uid), int(replicas or 0))
