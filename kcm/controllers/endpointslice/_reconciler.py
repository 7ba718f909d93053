"""Turning a Service's pods and existing slices into slice creates, updates and deletes
(Go's ``endpointslice/reconciler.go``).

Per address type, desired endpoints are grouped by their port set. For each group, existing
slices keep the endpoints still wanted (updated in place when their conditions, node, zone
or target changed) and lose the others; slices left empty are deleted; the remaining
endpoints first fill the slices that are being updated anyway (fullest first), then one
unchanged slice that they fit into best, then new slices of at most ``max_endpoints``.
Slices of port sets no longer wanted, of address types the Service no longer has, or owned
by another Service (an earlier one of the same name) are deleted. A Service with no endpoint
at all keeps one empty placeholder slice. Finally creates are turned into updates of slices
about to be deleted, to save API calls.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import msgspec

from kcm.client import ApiClient
from kcm.controllerkit import (
    LAST_CHANGE_TRIGGER_TIME_ANNOTATION,
    EndpointSet,
    EndpointSliceTracker,
    endpoints_equal_beyond_key,
    format_trigger_time,
    port_map_key,
    should_pod_be_in_endpoints,
    write_endpoint_slices,
)
from kcm.errors import KcmError
from kcm.models.core_v1 import Node, Pod, Service
from kcm.models.discovery_v1 import Endpoint, EndpointPort, EndpointSlice

from ._endpoints import (
    address_types,
    endpoint_ports,
    new_endpoint_slice,
    owned_by,
    pod_to_endpoint,
    slice_labels,
)

__all__ = ["NodeNotFound", "SlicePlan", "SliceReconciler", "plan_address_type"]

logger = logging.getLogger(__name__)

NodeGetter = Callable[[str], Node | None]


class NodeNotFound(KcmError):
    """A selected pod is bound to a node missing from the node cache (the pod is left out
    and the sync is retried)."""


@dataclass
class SlicePlan:
    """What one sync writes. ``to_update`` holds the new content of existing slices (by
    name); ``originals`` the existing slices by name, what updates are computed against."""

    to_create: list[EndpointSlice] = field(default_factory=list)
    to_update: list[EndpointSlice] = field(default_factory=list)
    to_delete: list[EndpointSlice] = field(default_factory=list)
    originals: dict[str, EndpointSlice] = field(default_factory=dict)
    errors: list[Exception] = field(default_factory=list)

    def extend(self, other: SlicePlan) -> None:
        self.to_create += other.to_create
        self.to_update += other.to_update
        self.to_delete += other.to_delete
        self.originals.update(other.originals)
        self.errors += other.errors


def _with_endpoints(endpoint_slice: EndpointSlice, endpoints: list[Endpoint]) -> EndpointSlice:
    return msgspec.structs.replace(endpoint_slice, endpoints=endpoints)


def _with_labels(endpoint_slice: EndpointSlice, labels: dict[str, str]) -> EndpointSlice:
    meta = msgspec.structs.replace(endpoint_slice.metadata, labels=labels)
    return msgspec.structs.replace(endpoint_slice, metadata=meta)


def _name(endpoint_slice: EndpointSlice) -> str:
    return endpoint_slice.metadata.name or ""


def _slice_to_fill(
    candidates: Sequence[EndpointSlice], count: int, max_endpoints: int
) -> EndpointSlice | None:
    """The unchanged slice that ``count`` more endpoints fill closest to full
    (``getSliceToFill``)."""
    closest_diff, closest = max_endpoints, None
    for candidate in candidates:
        diff = max_endpoints - (count + len(candidate.endpoints or ()))
        if 0 <= diff < closest_diff:
            closest_diff, closest = diff, candidate
            if diff == 0:
                break
    return closest


def _plan_port_group(
    service: Service,
    existing: Sequence[EndpointSlice],
    desired: EndpointSet,
    ports: Sequence[EndpointPort],
    address_type: str,
    max_endpoints: int,
) -> SlicePlan:
    """``reconcileByPortMapping``: the slices of one port set against its desired endpoints."""
    plan = SlicePlan()
    by_name: dict[str, EndpointSlice] = {}
    unchanged: list[str] = []
    to_update: list[str] = []
    to_delete: list[str] = []
    # 1. keep the wanted endpoints of each existing slice, updated; drop the others
    for existing_slice in existing:
        name = _name(existing_slice)
        by_name[name] = existing_slice
        kept: list[Endpoint] = []
        endpoint_updated = False
        for endpoint in existing_slice.endpoints or ():
            wanted = desired.get(endpoint)
            if wanted is None:
                continue
            kept.append(wanted)
            if not endpoints_equal_beyond_key(wanted, endpoint):
                endpoint_updated = True
            desired.discard(endpoint)
        labels, labels_changed = slice_labels(existing_slice.metadata.labels, service)
        if endpoint_updated or len(kept) != len(existing_slice.endpoints or ()):
            if not kept:
                to_delete.append(name)
            else:
                by_name[name] = _with_labels(_with_endpoints(existing_slice, kept), labels)
                to_update.append(name)
        elif labels_changed:
            by_name[name] = _with_labels(existing_slice, labels)
            to_update.append(name)
        else:
            unchanged.append(name)
    # 2. fill the slices being updated anyway, fullest first
    if len(desired) and to_update:
        for name in sorted(to_update, key=lambda n: -len(by_name[n].endpoints or ())):
            room = max_endpoints - len(by_name[name].endpoints or ())
            extra = [desired.pop() for _ in range(min(room, len(desired)))]
            if extra:
                by_name[name] = _with_endpoints(
                    by_name[name], [*(by_name[name].endpoints or ()), *extra]
                )
    # 3. the rest: into the unchanged slice they fit best, else into new slices
    while len(desired):
        target: EndpointSlice | None = None
        if len(desired) < max_endpoints and unchanged:
            target = _slice_to_fill([by_name[n] for n in unchanged], len(desired), max_endpoints)
        if target is None:
            target = new_endpoint_slice(service, ports, address_type)
        room = max_endpoints - len(target.endpoints or ())
        extra = [desired.pop() for _ in range(min(room, len(desired)))]
        target = _with_endpoints(target, [*(target.endpoints or ()), *extra])
        if target.metadata.name:
            by_name[_name(target)] = target
            to_update.append(_name(target))
            unchanged.remove(_name(target))
        else:
            plan.to_create.append(target)
    plan.to_update = [by_name[n] for n in sorted(set(to_update))]
    plan.to_delete = [by_name[n] for n in sorted(to_delete)]
    return plan


def plan_address_type(
    service: Service,
    pods: Sequence[Pod],
    existing: Sequence[EndpointSlice],
    address_type: str,
    *,
    get_node: NodeGetter,
    max_endpoints: int,
) -> SlicePlan:
    """``reconcileByAddressType``: the plan for one address type's slices (sorted by name)
    and the pods selected, in order."""
    plan = SlicePlan(originals={_name(s): s for s in existing})
    by_ports: dict[Hashable, list[EndpointSlice]] = {}
    for existing_slice in existing:
        if owned_by(existing_slice, service):
            by_ports.setdefault(port_map_key(existing_slice.ports), []).append(existing_slice)
        else:
            plan.to_delete.append(existing_slice)
    desired: dict[Hashable, EndpointSet] = {}
    desired_ports: dict[Hashable, list[EndpointPort]] = {}
    for pod in pods:
        # terminating pods stay, as terminating endpoints (EndpointSliceTerminatingCondition)
        if not should_pod_be_in_endpoints(pod, include_terminating=True):
            continue
        ports = endpoint_ports(service, pod)
        key = port_map_key(ports)
        desired.setdefault(key, EndpointSet())
        desired_ports.setdefault(key, ports)
        node_name = (pod.spec.node_name if pod.spec else None) or ""
        node = get_node(node_name)
        publish = bool(service.spec and service.spec.publish_not_ready_addresses)
        if node is None and not publish:
            plan.errors.append(
                NodeNotFound(
                    f"skipping Pod {pod.metadata.name} for Service "
                    f"{service.metadata.namespace}/{service.metadata.name}: "
                    f"Node {node_name} Not Found"
                )
            )
            continue
        endpoint = pod_to_endpoint(pod, node, service, address_type)
        if endpoint.addresses:
            desired[key].add(endpoint)
    for group, endpoints in desired.items():
        plan.extend(
            _plan_port_group(
                service,
                by_ports.get(group, []),
                endpoints,
                desired_ports[group],
                address_type,
                max_endpoints,
            )
        )
    for group, slices in by_ports.items():
        if group not in desired:
            plan.to_delete.extend(slices)
    if len(existing) == len(plan.to_delete) and not plan.to_create:
        placeholder = new_endpoint_slice(service, [], address_type)
        if len(plan.to_delete) == 1 and _same_placeholder(plan.to_delete[0], placeholder):
            plan.to_delete = []  # the placeholder is already there (kube 1.25+)
        else:
            plan.to_create.append(placeholder)
    return plan


def _same_placeholder(existing: EndpointSlice, placeholder: EndpointSlice) -> bool:
    """``placeholderSliceCompare``: namespace, labels, address type, ports and endpoints."""
    return (
        existing.metadata.namespace == placeholder.metadata.namespace
        and dict(existing.metadata.labels or {}) == dict(placeholder.metadata.labels or {})
        and existing.address_type == placeholder.address_type
        and not existing.endpoints
        and not existing.ports
    )


def _recycle(plan: SlicePlan, service: Service) -> None:
    """Turn creates into updates of slices about to be deleted (same address type, owned by
    this Service), as Go's ``finalize`` does."""
    i = 0
    while i < len(plan.to_delete) and plan.to_create:
        doomed = plan.to_delete[i]
        created = plan.to_create[-1]
        if doomed.address_type == created.address_type and owned_by(doomed, service):
            plan.to_create.pop()
            meta = msgspec.structs.replace(
                doomed.metadata,
                labels=created.metadata.labels,
                annotations=created.metadata.annotations,
                owner_references=created.metadata.owner_references,
                generate_name=created.metadata.generate_name,
                finalizers=None,
            )
            plan.to_update.append(
                msgspec.structs.replace(
                    doomed,
                    metadata=meta,
                    endpoints=created.endpoints,
                    ports=created.ports,
                )
            )
            del plan.to_delete[i]
        else:
            i += 1


def _with_trigger_time(endpoint_slice: EndpointSlice, when: datetime | None) -> EndpointSlice:
    annotations = dict(endpoint_slice.metadata.annotations or {})
    if when is not None:
        annotations[LAST_CHANGE_TRIGGER_TIME_ANNOTATION] = format_trigger_time(when)
    else:
        annotations.pop(LAST_CHANGE_TRIGGER_TIME_ANNOTATION, None)
    meta = msgspec.structs.replace(endpoint_slice.metadata, annotations=annotations or None)
    return msgspec.structs.replace(endpoint_slice, metadata=meta)


class SliceReconciler:
    """Plans and writes a Service's slices; records every write in ``tracker``.

    Args:
        client: the API client slices are written with.
        get_node: the cached Node of a name (None if missing).
        tracker: the controller's :class:`~kcm.controllerkit.EndpointSliceTracker`.
        max_endpoints: ``--max-endpoints-per-slice``.
    """

    def __init__(
        self,
        client: ApiClient,
        *,
        get_node: NodeGetter,
        tracker: EndpointSliceTracker,
        max_endpoints: int,
    ) -> None:
        self._client = client
        self._get_node = get_node
        self._tracker = tracker
        self.max_endpoints = max_endpoints

    def plan(
        self, service: Service, pods: Sequence[Pod], existing: Sequence[EndpointSlice]
    ) -> SlicePlan:
        """The whole plan: every address type of the Service, plus deletes of slices of
        other address types."""
        supported = address_types(service)
        plan = SlicePlan()
        stray = [s for s in existing if s.address_type not in supported]
        for address_type in supported:
            of_type = [s for s in existing if s.address_type == address_type]
            plan.extend(
                plan_address_type(
                    service,
                    pods,
                    sorted(of_type, key=_name),
                    address_type,
                    get_node=self._get_node,
                    max_endpoints=self.max_endpoints,
                )
            )
        plan.to_delete += stray
        plan.originals.update({_name(s): s for s in stray})
        return plan

    async def reconcile(
        self,
        service: Service,
        pods: Sequence[Pod],
        existing: Sequence[EndpointSlice],
        trigger_time: datetime | None,
    ) -> None:
        """Plan and write.

        Raises:
            KcmError: a write failed (the writes after it were not attempted).
            NodeNotFound: pods were left out because their nodes are missing (after the
                writes; the message lists them as Go's aggregate errors do).
        """
        pods = sorted(pods, key=lambda p: p.metadata.name or "")
        plan = self.plan(service, pods, existing)
        _recycle(plan, service)
        await self._write(service, plan, trigger_time)
        if len(plan.errors) == 1:
            raise plan.errors[0]
        if plan.errors:
            raise NodeNotFound(f"[{', '.join(str(e) for e in plan.errors)}]")

    async def _write(
        self, service: Service, plan: SlicePlan, trigger_time: datetime | None
    ) -> None:
        await write_endpoint_slices(
            self._client.api(EndpointSlice, service.metadata.namespace),
            self._tracker,
            create=[_with_trigger_time(s, trigger_time) for s in plan.to_create],
            update=[
                (plan.originals[_name(s)], _with_trigger_time(s, trigger_time))
                for s in plan.to_update
            ],
            delete=plan.to_delete,
            # no new slices for a deleting Service: the garbage collector is removing them
            owner_deleting=service.metadata.deletion_timestamp is not None,
        )
