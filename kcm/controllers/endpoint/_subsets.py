"""What a Service's Endpoints should hold: its pods as ready and not-ready addresses per port,
truncated at :data:`MAX_CAPACITY` (the body of Go's ``syncService``, without I/O)."""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping, Sequence

import msgspec

from kcm.controllerkit import (
    find_port,
    is_ipv6,
    is_pod_finished,
    is_pod_ready,
    pod_ips_of_family,
    pod_target_ref,
    should_set_hostname,
)
from kcm.models.core_v1 import EndpointAddress, EndpointPort, EndpointSubset, Pod, Service

from ._repack import Entry, repack_subsets

__all__ = [
    "MAX_CAPACITY",
    "OVER_CAPACITY_ANNOTATION",
    "TOLERATE_UNREADY_ANNOTATION",
    "capacity_annotation_set_correctly",
    "desired_subsets",
    "pod_address",
    "tolerate_unready",
    "truncate_subsets",
]

logger = logging.getLogger(__name__)

MAX_CAPACITY = 1000
"""At most this many addresses (ready and not ready) are written into one Endpoints."""

OVER_CAPACITY_ANNOTATION = "endpoints.kubernetes.io/over-capacity"
"""Set to ``truncated`` on an Endpoints that holds only :data:`MAX_CAPACITY` of its
addresses (kube 1.22+)."""

TOLERATE_UNREADY_ANNOTATION = "service.alpha.kubernetes.io/tolerate-unready-endpoints"
"""The deprecated predecessor of ``publishNotReadyAddresses``; when it parses as a Go bool it
wins."""

_GO_TRUE = {"1", "t", "T", "TRUE", "true", "True"}
_GO_FALSE = {"0", "f", "F", "FALSE", "false", "False"}


def tolerate_unready(service: Service) -> bool:
    """Not-ready pods are published as ready addresses: ``spec.publishNotReadyAddresses``,
    overridden by :data:`TOLERATE_UNREADY_ANNOTATION` when that is a Go boolean."""
    tolerate = bool(service.spec and service.spec.publish_not_ready_addresses)
    value = (service.metadata.annotations or {}).get(TOLERATE_UNREADY_ANNOTATION)
    if value in _GO_TRUE:
        return True
    if value in _GO_FALSE:
        return False
    if value is not None:
        logger.warning(
            "service %s/%s: cannot parse %s=%r as a bool",
            service.metadata.namespace,
            service.metadata.name,
            TOLERATE_UNREADY_ANNOTATION,
            value,
        )
    return tolerate


def _wants_ipv6(service: Service, pod: Pod) -> bool:
    """The Service's address family: ``ipFamilies[0]``, else its cluster IP's, else (headless
    without families) the pod IP's."""
    spec = service.spec
    families = spec.ip_families if spec else None
    if families:
        return families[0] == "IPv6"
    cluster_ip = spec.cluster_ip if spec else None
    if cluster_ip and cluster_ip != "None":
        return is_ipv6(cluster_ip)
    return is_ipv6(pod.status.pod_ip if pod.status else None)


def pod_address(service: Service, pod: Pod) -> EndpointAddress | None:
    """The pod's address for the Service: the first pod IP of the Service's family, the node,
    the target (and the hostname, see ``should_set_hostname``); None without such an IP."""
    ips = pod_ips_of_family(pod, ipv6=_wants_ipv6(service, pod))
    if not ips:
        return None
    return EndpointAddress(
        ip=ips[0],
        node_name=(pod.spec.node_name if pod.spec else None) or "",
        hostname=(pod.spec.hostname if pod.spec and should_set_hostname(pod, service) else None),
        target_ref=pod_target_ref(pod),
    )


def desired_subsets(
    service: Service, pods: Iterable[Pod], *, tolerate_unready: bool
) -> list[EndpointSubset]:
    """The Service's subsets from the pods it selects, repacked and sorted.

    A pod needs a ``podIP`` (and one of the Service's family in ``podIPs``); a terminating pod
    counts only when not-ready addresses are tolerated. Each Service port gets the pod's port
    (named target ports resolved per pod; a pod without the name is left out of that port);
    a headless Service without ports gets port-less addresses. Ready (or tolerated) pods are
    ``addresses``, others ``notReadyAddresses`` unless they finished for good.
    """
    entries: list[Entry] = []
    spec = service.spec
    service_ports = (spec.ports if spec else None) or ()
    headless = bool(spec and spec.cluster_ip == "None")
    for pod in pods:
        if not (pod.status and pod.status.pod_ip):
            continue
        if not tolerate_unready and pod.metadata.deletion_timestamp is not None:
            continue
        address = pod_address(service, pod)
        if address is None:
            continue
        if tolerate_unready or is_pod_ready(pod):
            ready = True
        elif not is_pod_finished(pod):
            ready = False
        else:
            continue
        if not service_ports:
            if headless:
                entries.append(Entry(address, None, ready))
            continue
        for service_port in service_ports:
            number = find_port(pod, service_port)
            if number is None:
                continue
            port = EndpointPort(
                name=service_port.name or None,
                port=number,
                protocol=service_port.protocol,
                app_protocol=service_port.app_protocol,
            )
            entries.append(Entry(address, port, ready))
    return repack_subsets(entries)


def _count(subsets: Sequence[EndpointSubset] | None) -> tuple[int, int]:
    ready = sum(len(s.addresses or ()) for s in subsets or ())
    not_ready = sum(len(s.not_ready_addresses or ()) for s in subsets or ())
    return ready, not_ready


def capacity_annotation_set_correctly(
    annotations: Mapping[str, str] | None, subsets: Sequence[EndpointSubset] | None
) -> bool:
    """The current Endpoints needs no capacity change: at most :data:`MAX_CAPACITY` addresses
    and no :data:`OVER_CAPACITY_ANNOTATION`."""
    if sum(_count(subsets)) > MAX_CAPACITY:
        return False
    return OVER_CAPACITY_ANNOTATION not in (annotations or {})


def truncate_subsets(subsets: list[EndpointSubset]) -> tuple[list[EndpointSubset], bool]:
    """Keep at most :data:`MAX_CAPACITY` addresses, ready ones first, spread over the subsets
    in proportion to their size (rounded up, so the last subsets may get fewer)
    (``truncateEndpoints``). Returns the subsets and whether anything was cut."""
    total_ready, total_not_ready = _count(subsets)
    if total_ready + total_not_ready <= MAX_CAPACITY:
        return subsets, False
    truncate_ready = total_ready > MAX_CAPACITY
    limit = MAX_CAPACITY if truncate_ready else MAX_CAPACITY - total_ready
    total = total_ready if truncate_ready else total_not_ready
    can_add = limit
    out = []
    for subset in subsets:
        group = (subset.addresses if truncate_ready else subset.not_ready_addresses) or ()
        take = min(math.ceil(len(group) / total * limit), can_add)
        if truncate_ready:
            kept = list(group[:take])
            subset = msgspec.structs.replace(
                subset, addresses=kept or None, not_ready_addresses=None
            )
        else:
            kept = list(group[:take])
            subset = msgspec.structs.replace(subset, not_ready_addresses=kept or None)
        can_add -= len(kept)
        out.append(subset)
    return out, True
