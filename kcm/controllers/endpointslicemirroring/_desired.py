"""What an Endpoints object mirrors to: endpoints grouped by address type and port set, at most
``max_per_subset`` addresses of each subset (Go's ``desiredCalc``, ``addressToEndpoint`` and
``newEndpointSlice`` of ``endpointslicemirroring``). Pure functions."""

from __future__ import annotations

import ipaddress
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

from kcm.controllerkit import (
    LAST_CHANGE_TRIGGER_TIME_ANNOTATION,
    MANAGED_BY_LABEL,
    SERVICE_NAME_LABEL,
    EndpointSet,
    endpoint_slice_prefix,
    port_map_key,
)
from kcm.models.core_v1 import EndpointAddress, Endpoints
from kcm.models.core_v1 import EndpointPort as CoreEndpointPort
from kcm.models.discovery_v1 import Endpoint, EndpointConditions, EndpointPort, EndpointSlice
from kcm.models.meta_v1 import ObjectMeta
from kcm.runtime import new_controller_ref

__all__ = [
    "CONTROLLER_NAME",
    "LAST_APPLIED_ANNOTATION",
    "Desired",
    "address_type",
    "desired_endpoints",
    "mirrored_annotations",
    "new_mirrored_slice",
]

CONTROLLER_NAME = "endpointslicemirroring-controller.k8s.io"
"""The ``endpointslice.kubernetes.io/managed-by`` value of mirrored slices."""

LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"

GroupKey = tuple[str, Hashable]
"""(address type, port set)."""


def address_type(ip: str | None) -> str | None:
    """``IPv4`` or ``IPv6`` for an address as Go's ``ParseIPSloppy`` reads it (IPv4 parts
    with leading zeros are decimal; an IPv4-mapped IPv6 address is IPv4); None if it is not
    an IP address."""
    text = (ip or "").strip()
    parts = text.split(".")
    if len(parts) == 4 and all(p.isdigit() for p in parts):
        text = ".".join(str(int(p)) for p in parts)
    try:
        parsed = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is None:
        return "IPv6"
    return "IPv4"


def _slice_ports(ports: Sequence[CoreEndpointPort] | None) -> list[EndpointPort]:
    return [
        EndpointPort(
            name=p.name or "",
            port=p.port,
            protocol=p.protocol or "",
            app_protocol=p.app_protocol,
        )
        for p in ports or ()
    ]


def _endpoint(address: EndpointAddress, ready: bool) -> Endpoint:
    return Endpoint(
        addresses=[address.ip or ""],
        conditions=EndpointConditions(ready=ready),
        target_ref=address.target_ref,
        node_name=address.node_name,
        hostname=address.hostname or None,
    )


@dataclass
class Desired:
    """Desired endpoints and ports per (address type, port set), and what was left out."""

    endpoints: dict[GroupKey, EndpointSet] = field(default_factory=dict)
    ports: dict[GroupKey, list[EndpointPort]] = field(default_factory=dict)
    invalid: int = 0
    skipped: int = 0
    """Addresses left out: invalid ones and those beyond ``max_per_subset``."""


def desired_endpoints(endpoints: Endpoints, max_per_subset: int) -> Desired:
    """Each subset's ready, then not-ready addresses as endpoints, up to ``max_per_subset``
    per subset; every subset's port set gets a group for both address types (an empty one
    deletes that type's slices)."""
    desired = Desired()
    for subset in endpoints.subsets or ():
        ports = _slice_ports(subset.ports)
        keys = {kind: (kind, port_map_key(ports)) for kind in ("IPv4", "IPv6")}
        for key in keys.values():
            desired.endpoints.setdefault(key, EndpointSet())
            desired.ports[key] = ports
        addresses = [(a, True) for a in subset.addresses or ()]
        addresses += [(a, False) for a in subset.not_ready_addresses or ()]
        added = 0
        for address, ready in addresses:
            if added >= max_per_subset:
                break
            kind = address_type(address.ip)
            if kind is None:
                desired.invalid += 1
                continue
            desired.endpoints[keys[kind]].add(_endpoint(address, ready))
            added += 1
        desired.skipped += len(addresses) - added
    return desired


def mirrored_annotations(endpoints: Endpoints) -> dict[str, str]:
    """The Endpoints' annotations but the trigger time and kubectl's last-applied one."""
    skipped = (LAST_CHANGE_TRIGGER_TIME_ANNOTATION, LAST_APPLIED_ANNOTATION)
    return {k: v for k, v in (endpoints.metadata.annotations or {}).items() if k not in skipped}


def new_mirrored_slice(
    endpoints: Endpoints, ports: Sequence[EndpointPort], kind: str, name: str | None
) -> EndpointSlice:
    """An empty mirror of ``endpoints``: its labels (plus the Service name and managed-by),
    its annotations (see :func:`mirrored_annotations`), a controller reference to it; named
    ``name``, or ``generateName: <endpoints>-`` for a new one."""
    labels = dict(endpoints.metadata.labels or {})
    labels[SERVICE_NAME_LABEL] = endpoints.metadata.name or ""
    labels[MANAGED_BY_LABEL] = CONTROLLER_NAME
    return EndpointSlice(
        metadata=ObjectMeta(
            name=name,
            generate_name=None if name else endpoint_slice_prefix(endpoints.metadata.name or ""),
            namespace=endpoints.metadata.namespace,
            labels=labels,
            annotations=mirrored_annotations(endpoints) or None,
            owner_references=[new_controller_ref(endpoints, "v1", "Endpoints")],
        ),
        address_type=kind,
        ports=list(ports),
        endpoints=[],
    )
