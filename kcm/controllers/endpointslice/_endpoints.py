"""A Service's EndpointSlice content: pods as endpoints, ports, address types, labels, new
slices (Go's ``endpointslice/utils.go``). Pure functions."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from kcm.controllerkit import (
    HEADLESS_SERVICE_LABEL,
    MANAGED_BY_LABEL,
    SERVICE_NAME_LABEL,
    endpoint_slice_prefix,
    find_port,
    is_ipv6,
    is_pod_ready,
    pod_ips_of_family,
    pod_target_ref,
    service_ip_set,
    should_set_hostname,
)
from kcm.models.core_v1 import Node, Pod, Service
from kcm.models.discovery_v1 import Endpoint, EndpointConditions, EndpointPort, EndpointSlice
from kcm.models.meta_v1 import ObjectMeta
from kcm.runtime import new_controller_ref

__all__ = [
    "CONTROLLER_NAME",
    "ZONE_LABEL",
    "address_types",
    "endpoint_ports",
    "new_endpoint_slice",
    "owned_by",
    "pod_to_endpoint",
    "slice_labels",
]

logger = logging.getLogger(__name__)

CONTROLLER_NAME = "endpointslice-controller.k8s.io"
"""The ``endpointslice.kubernetes.io/managed-by`` value of this controller's slices."""

ZONE_LABEL = "topology.kubernetes.io/zone"
"""The node label an endpoint's ``zone`` comes from."""

_RESERVED = (SERVICE_NAME_LABEL, MANAGED_BY_LABEL, HEADLESS_SERVICE_LABEL)


def address_types(service: Service) -> list[str]:
    """The slice address types a Service gets, from ``spec.ipFamilies``; without them (an
    older API server), its cluster IP's family, or both for a headless Service."""
    spec = service.spec
    families = list((spec.ip_families if spec else None) or ())
    types: list[str] = [t for t in ("IPv4", "IPv6") if t in families]
    if types:
        return types
    if service_ip_set(service):
        return ["IPv6" if is_ipv6(spec.cluster_ip if spec else None) else "IPv4"]
    return ["IPv4", "IPv6"]


def pod_to_endpoint(pod: Pod, node: Node | None, service: Service, address_type: str) -> Endpoint:
    """The pod as an endpoint of ``address_type``: its IPs of that family; ``serving`` = pod
    Ready, ``terminating`` = being deleted, ``ready`` = serving and not terminating (or
    ``publishNotReadyAddresses``); node, zone (the node's topology label), hostname, target."""
    serving = is_pod_ready(pod)
    terminating = pod.metadata.deletion_timestamp is not None
    publish = bool(service.spec and service.spec.publish_not_ready_addresses)
    zone = ((node.metadata.labels or {}).get(ZONE_LABEL) if node is not None else None) or None
    spec = pod.spec
    return Endpoint(
        addresses=pod_ips_of_family(pod, ipv6=address_type == "IPv6"),
        conditions=EndpointConditions(
            ready=publish or (serving and not terminating),
            serving=serving,
            terminating=terminating,
        ),
        target_ref=pod_target_ref(pod),
        node_name=(spec.node_name if spec else None) or None,
        zone=zone,
        hostname=spec.hostname if spec is not None and should_set_hostname(pod, service) else None,
    )


def endpoint_ports(service: Service, pod: Pod) -> list[EndpointPort]:
    """The pod's ports for the Service's ports (named target ports resolved in the pod;
    ports the pod lacks are left out); none for a headless Service without ports."""
    ports = []
    for service_port in (service.spec.ports if service.spec else None) or ():
        number = find_port(pod, service_port)
        if number is None:
            continue
        ports.append(
            EndpointPort(
                name=service_port.name or "",
                port=number,
                protocol=service_port.protocol,
                app_protocol=service_port.app_protocol,
            )
        )
    return ports


def owned_by(endpoint_slice: EndpointSlice, service: Service) -> bool:
    """The slice has an owner reference to this Service (same UID)."""
    return any(
        ref.uid == service.metadata.uid and ref.kind == "Service" and ref.api_version == "v1"
        for ref in endpoint_slice.metadata.owner_references or ()
    )


def slice_labels(
    current: Mapping[str, str] | None, service: Service
) -> tuple[dict[str, str], bool]:
    """A slice's labels for ``service`` (its labels, the headless label when it has no
    cluster IP, the Service name and managed-by) and whether ``current`` differs from the
    Service's labels (the reserved ones aside) (``setEndpointSliceLabels``)."""
    ours = {k: v for k, v in (current or {}).items() if k not in _RESERVED}
    labels = {}
    for key, value in (service.metadata.labels or {}).items():
        if key in _RESERVED:
            logger.warning(
                "service %s/%s uses reserved EndpointSlice label %s; skipped",
                service.metadata.namespace,
                service.metadata.name,
                key,
            )
            continue
        labels[key] = value
    changed = ours != labels
    if not service_ip_set(service):
        labels[HEADLESS_SERVICE_LABEL] = ""
    labels[SERVICE_NAME_LABEL] = service.metadata.name or ""
    labels[MANAGED_BY_LABEL] = CONTROLLER_NAME
    return labels, changed


def new_endpoint_slice(
    service: Service, ports: Sequence[EndpointPort], address_type: str
) -> EndpointSlice:
    """An empty slice for the Service: ``generateName: <service>-``, a controller reference
    to it, its labels, the port group and the address type."""
    labels, _ = slice_labels(None, service)
    return EndpointSlice(
        metadata=ObjectMeta(
            generate_name=endpoint_slice_prefix(service.metadata.name or ""),
            namespace=service.metadata.namespace,
            labels=labels,
            owner_references=[new_controller_ref(service, "v1", "Service")],
        ),
        address_type=address_type,
        ports=list(ports),
        endpoints=[],
    )
