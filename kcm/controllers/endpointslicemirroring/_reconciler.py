"""Mirroring one Endpoints object into EndpointSlices (Go's ``endpointslicemirroring``
``reconciler.go``).

Every (address type, port set) of the Endpoints maps to one slice: the first existing slice
of that group is rewritten when its endpoints, labels or annotations differ (the others of the
group are deleted), or a slice is created; groups that no longer exist lose their slices.
Creates are then turned into updates of slices about to be deleted.
"""

from __future__ import annotations

import logging
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

import msgspec

from kcm.client import ApiClient
from kcm.controllerkit import (
    MANAGED_BY_LABEL,
    SERVICE_NAME_LABEL,
    EndpointSet,
    EndpointSliceTracker,
    endpoints_equal_beyond_key,
    port_map_key,
    write_endpoint_slices,
)
from kcm.errors import KcmError, NotFound
from kcm.models.core_v1 import Endpoints
from kcm.models.discovery_v1 import EndpointPort, EndpointSlice
from kcm.record import EventRecorder

from ._desired import desired_endpoints, mirrored_annotations, new_mirrored_slice

__all__ = ["MirrorPlan", "MirrorReconciler", "plan_mirror"]

logger = logging.getLogger(__name__)


@dataclass
class MirrorPlan:
    """Slices to create, to update (new content, by name of an existing slice) and to
    delete; the existing slices by name."""

    to_create: list[EndpointSlice] = field(default_factory=list)
    to_update: list[EndpointSlice] = field(default_factory=list)
    to_delete: list[EndpointSlice] = field(default_factory=list)
    originals: dict[str, EndpointSlice] = field(default_factory=dict)


def _name(endpoint_slice: EndpointSlice) -> str:
    return endpoint_slice.metadata.name or ""


def _unchanged(existing: EndpointSlice, desired: EndpointSet) -> bool:
    """``totalChanges`` found nothing to add, update or remove."""
    matched = 0
    for endpoint in existing.endpoints or ():
        wanted = desired.get(endpoint)
        if wanted is None or not endpoints_equal_beyond_key(wanted, endpoint):
            return False
        matched += 1
    return matched == len(desired)


def _meta_matches(endpoints: Endpoints, existing: EndpointSlice) -> bool:
    labels = dict(existing.metadata.labels or {})
    labels.pop(MANAGED_BY_LABEL, None)
    labels.pop(SERVICE_NAME_LABEL, None)
    return dict(endpoints.metadata.labels or {}) == labels and mirrored_annotations(
        endpoints
    ) == dict(existing.metadata.annotations or {})


def _plan_group(
    endpoints: Endpoints,
    existing: Sequence[EndpointSlice],
    desired: EndpointSet,
    ports: Sequence[EndpointPort],
    kind: str,
    max_per_subset: int,
) -> MirrorPlan:
    """``reconcileByPortMapping``: one slice per group, the first existing one reused."""
    plan = MirrorPlan()
    if not len(desired):
        plan.to_delete = list(existing)
        return plan
    name = None
    if existing:
        plan.to_delete = list(existing[1:])
        first = existing[0]
        if _unchanged(first, desired) and _meta_matches(endpoints, first):
            return plan
        name = _name(first)
    mirror = new_mirrored_slice(endpoints, ports, kind, name)
    taken = [desired.pop() for _ in range(min(max_per_subset, len(desired)))]
    mirror = msgspec.structs.replace(mirror, endpoints=taken)
    if name:
        plan.to_update.append(mirror)
    else:
        plan.to_create.append(mirror)
    return plan


def plan_mirror(
    endpoints: Endpoints, existing: Sequence[EndpointSlice], max_per_subset: int
) -> tuple[MirrorPlan, int, int]:
    """The plan for ``endpoints`` against its mirrored slices (sorted by name), and the
    numbers of invalid and of skipped addresses."""
    desired = desired_endpoints(endpoints, max_per_subset)
    existing = sorted(existing, key=_name)
    by_group: dict[tuple[str, Hashable], list[EndpointSlice]] = {}
    for existing_slice in existing:
        found: tuple[str, Hashable] = (
            existing_slice.address_type or "",
            port_map_key(existing_slice.ports),
        )
        by_group.setdefault(found, []).append(existing_slice)
    plan = MirrorPlan(originals={_name(s): s for s in existing})
    for key, wanted in desired.endpoints.items():
        group = _plan_group(
            endpoints,
            by_group.get(key, []),
            wanted,
            desired.ports[key],
            key[0],
            max_per_subset,
        )
        plan.to_create += group.to_create
        plan.to_update += group.to_update
        plan.to_delete += group.to_delete
    for key, slices in by_group.items():
        if key not in desired.endpoints:
            plan.to_delete += slices
    _recycle(plan)
    return plan, desired.invalid, desired.skipped


def _recycle(plan: MirrorPlan) -> None:
    """``recycleSlices``: pair creates with deletes of the same address type; each pair
    becomes an update of the slice to delete."""
    for kind in ("IPv4", "IPv6"):
        creates = [s for s in plan.to_create if s.address_type == kind]
        deletes = [s for s in plan.to_delete if s.address_type == kind]
        for created, doomed in zip(creates, deletes, strict=False):
            plan.to_create.remove(created)
            plan.to_delete.remove(doomed)
            meta = msgspec.structs.replace(
                created.metadata, name=doomed.metadata.name, generate_name=None
            )
            plan.to_update.append(msgspec.structs.replace(created, metadata=meta))


def _rewrite(original: EndpointSlice, mirror: EndpointSlice) -> EndpointSlice:
    """``original`` with ``mirror``'s content, as Go's unconditional PUT of ``mirror`` leaves
    it (labels, annotations, owner references, finalizers replaced)."""
    meta = msgspec.structs.replace(
        original.metadata,
        labels=mirror.metadata.labels,
        annotations=mirror.metadata.annotations,
        owner_references=mirror.metadata.owner_references,
        finalizers=None,
    )
    return msgspec.structs.replace(
        original,
        metadata=meta,
        address_type=mirror.address_type,
        ports=mirror.ports,
        endpoints=mirror.endpoints,
    )


class MirrorReconciler:
    """Plans and writes the mirrored slices of Endpoints objects.

    Args:
        client: the API client slices are written with.
        tracker: the controller's EndpointSlice tracker (every write is recorded).
        recorder: receives ``InvalidIPAddress`` and ``TooManyAddressesToMirror`` warnings (on
            the Endpoints).
        max_per_subset: ``--mirroring-max-endpoints-per-subset``.
    """

    def __init__(
        self,
        client: ApiClient,
        *,
        tracker: EndpointSliceTracker,
        recorder: EventRecorder,
        max_per_subset: int,
    ) -> None:
        self._client = client
        self._tracker = tracker
        self._recorder = recorder
        self.max_per_subset = max_per_subset

    async def reconcile(self, endpoints: Endpoints, existing: Sequence[EndpointSlice]) -> None:
        """Mirror ``endpoints`` into slices.

        Raises:
            KcmError: a write failed (the writes after it were not attempted).
        """
        plan, invalid, skipped = plan_mirror(endpoints, existing, self.max_per_subset)
        if invalid:
            self._recorder.event(
                endpoints,
                "Warning",
                "InvalidIPAddress",
                f"Skipped {invalid} invalid IP addresses when mirroring to EndpointSlices",
            )
        if skipped > invalid:
            self._recorder.event(
                endpoints,
                "Warning",
                "TooManyAddressesToMirror",
                f"A max of {self.max_per_subset} addresses can be mirrored to EndpointSlices "
                f"per Endpoints subset. {skipped} addresses were skipped",
            )
        originals = [plan.originals[_name(mirror)] for mirror in plan.to_update]
        await write_endpoint_slices(
            self._client.api(EndpointSlice, endpoints.metadata.namespace),
            self._tracker,
            create=plan.to_create,
            update=[(o, _rewrite(o, m)) for o, m in zip(originals, plan.to_update, strict=True)],
            delete=plan.to_delete,
            owner_deleting=endpoints.metadata.deletion_timestamp is not None,
        )

    async def delete_all(self, namespace: str, slices: Sequence[EndpointSlice]) -> None:
        """Delete mirrored slices (their Endpoints went, or stopped being mirrored).

        Raises:
            KcmError: some deletes failed (the message counts them, with the first error).
        """
        api = self._client.api(EndpointSlice, namespace)
        errors: list[KcmError] = []
        for doomed in slices:
            try:
                await api.delete(_name(doomed))
            except NotFound:
                continue
            except KcmError as exc:
                errors.append(exc)
        if errors:
            raise KcmError(
                f"error(s) deleting {len(errors)}/{len(slices)} EndpointSlices, "
                f"including: {errors[0]}"
            )
