"""A pod as a Service endpoint: whether it is one, its address, hostname and ports.

What the Endpoints and EndpointSlice controllers both ask of a selected pod (Go's
``pkg/controller/util/endpoint``, ``podutil.FindPort`` and the address helpers of both
controllers). Pure functions of the pod and the Service.
"""

from __future__ import annotations

import ipaddress

from kcm.models.core_v1 import ObjectReference, Pod, Service, ServicePort

__all__ = [
    "find_port",
    "is_ipv6",
    "is_pod_finished",
    "pod_ips_of_family",
    "pod_target_ref",
    "should_pod_be_in_endpoints",
    "should_set_hostname",
]


def is_ipv6(ip: str | None) -> bool:
    """``ip`` parses as an IPv6 address (``utilnet.IsIPv6String``); anything else, including
    text that is no address at all, is not."""
    try:
        return ipaddress.ip_address((ip or "").strip()).version == 6
    except ValueError:
        return False


def pod_ips_of_family(pod: Pod, *, ipv6: bool) -> list[str]:
    """The pod's ``status.podIPs`` of one family, in order."""
    ips = (pod.status.pod_ips if pod.status else None) or ()
    return [p.ip for p in ips if p.ip and is_ipv6(p.ip) == ipv6]


def should_pod_be_in_endpoints(pod: Pod, *, include_terminating: bool) -> bool:
    """Whether a selected pod is an endpoint at all (``ShouldPodBeInEndpointSlice``, 1.24).

    It needs an IP; a terminating pod only counts when ``include_terminating``; a pod that
    finished for good is out: ``restartPolicy: Never`` and Succeeded or Failed, or
    ``OnFailure`` and Succeeded (``Always`` pods may come back, so they stay).
    """
    status = pod.status
    if not (status and (status.pod_ip or status.pod_ips)):
        return False
    if not include_terminating and pod.metadata.deletion_timestamp is not None:
        return False
    return not is_pod_finished(pod)


def is_pod_finished(pod: Pod) -> bool:
    """The pod ended and its restart policy will not run it again (the Endpoints
    controller's ``shouldPodBeInEndpoints``, negated)."""
    phase = pod.status.phase if pod.status else None
    policy = pod.spec.restart_policy if pod.spec else None
    if policy == "Never":
        return phase in ("Failed", "Succeeded")
    if policy == "OnFailure":
        return phase == "Succeeded"
    return False


def should_set_hostname(pod: Pod, service: Service) -> bool:
    """The pod's ``spec.hostname`` goes into its endpoint when its ``spec.subdomain`` names
    this Service in the same namespace (the DNS name ``<hostname>.<service>.<ns>``)."""
    spec = pod.spec
    return (
        spec is not None
        and bool(spec.hostname)
        and spec.subdomain == service.metadata.name
        and service.metadata.namespace == pod.metadata.namespace
    )


def find_port(pod: Pod, port: ServicePort) -> int | None:
    """The pod's port number for a Service port (``podutil.FindPort``): a numeric
    ``targetPort`` as it is; a named one is looked up among the containers' ports of the same
    protocol (TCP when unset); None when the pod has no such port."""
    target = port.target_port if port.target_port is not None else port.port
    if isinstance(target, int):
        return target
    if target is None:
        return None
    protocol = port.protocol or "TCP"
    for container in (pod.spec.containers if pod.spec else None) or ():
        for cport in container.ports or ():
            if cport.name == target and (cport.protocol or "TCP") == protocol:
                return cport.container_port
    return None


def pod_target_ref(pod: Pod) -> ObjectReference:
    """The ``targetRef`` of the pod's endpoint: kind, namespace, name, uid and (as 1.24)
    resourceVersion."""
    meta = pod.metadata
    return ObjectReference(
        kind="Pod",
        namespace=meta.namespace,
        name=meta.name,
        uid=meta.uid,
        resource_version=meta.resource_version,
    )
