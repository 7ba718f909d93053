"""Services and the pods they select: which Services a pod event concerns.

The Endpoints and EndpointSlice controllers sync per Service; a pod event must find the
Services that select the pod now (or did before a label change). Go's
``ServiceSelectorCache.GetPodServiceMemberships`` and ``GetServicesToUpdateOnPodChange``; a
Service's selector is a plain label map, so matching it needs no cache here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kcm.models import ObjectKey, object_key
from kcm.models.core_v1 import Pod, Service

from ._pod_predicates import is_pod_ready

__all__ = [
    "HEADLESS_SERVICE_LABEL",
    "LEADER_ELECTION_ANNOTATION",
    "pod_endpoints_changed",
    "service_ip_set",
    "service_selector",
    "services_for_pod",
    "services_to_update_on_pod_change",
]

HEADLESS_SERVICE_LABEL = "service.kubernetes.io/headless"
"""On the Endpoints and EndpointSlices of a Service without a cluster IP (value ``""``)."""

LEADER_ELECTION_ANNOTATION = "control-plane.alpha.kubernetes.io/leader"
"""Endpoints used as leader-election locks carry it; endpoint controllers leave them alone."""


def service_selector(service: Service) -> Mapping[str, str] | None:
    """The Service's pod selector, or None for a Service without one (its endpoints are
    written by hand). An empty selector counts as none: the real API server stores maps in
    protobuf, where ``selector: {}`` reads back as no selector."""
    selector = service.spec.selector if service.spec else None
    return selector or None


def service_ip_set(service: Service) -> bool:
    """The Service has a cluster IP (``helper.IsServiceIPSet``): not headless."""
    ip = service.spec.cluster_ip if service.spec else None
    return bool(ip) and ip != "None"


def _selects(selector: Mapping[str, str], labels: Mapping[str, str] | None) -> bool:
    labels = labels or {}
    return all(labels.get(k) == v for k, v in selector.items())


def services_for_pod(services: Iterable[Service], pod: Pod) -> set[ObjectKey]:
    """Keys of the Services (of the pod's namespace) whose selector matches the pod's labels
    (``GetPodServiceMemberships``); Services without a selector match nothing."""
    keys = set()
    for service in services:
        if service.metadata.namespace != pod.metadata.namespace:
            continue
        selector = service_selector(service)
        if selector is not None and _selects(selector, pod.metadata.labels):
            keys.add(object_key(service))
    return keys


def _pod_ips(pod: Pod) -> list[str | None]:
    return [p.ip for p in (pod.status.pod_ips if pod.status else None) or ()]


def _host_and_domain(pod: Pod) -> tuple[str | None, str | None]:
    return (pod.spec.hostname, pod.spec.subdomain) if pod.spec else (None, None)


def pod_endpoints_changed(old: Pod, new: Pod) -> tuple[bool, bool]:
    """(the pod's endpoint may have changed, the Services selecting it may have changed).

    The endpoint changes with the deletion timestamp, readiness and pod IPs; membership with
    labels, and hostname or subdomain (``podEndpointsChanged``). Name, namespace, UID and node
    are fixed before a pod has an IP.
    """
    labels_changed = (old.metadata.labels or {}) != (new.metadata.labels or {}) or _host_and_domain(
        old
    ) != _host_and_domain(new)
    pod_changed = (
        old.metadata.deletion_timestamp != new.metadata.deletion_timestamp
        or is_pod_ready(old) != is_pod_ready(new)
        or _pod_ips(old) != _pod_ips(new)
    )
    return pod_changed, labels_changed


def services_to_update_on_pod_change(
    services: Iterable[Service], old: Pod, new: Pod
) -> set[ObjectKey]:
    """The Services a pod update concerns (``GetServicesToUpdateOnPodChange``): none for a
    resync (same resourceVersion) or an irrelevant change; those selecting the new pod when
    only the endpoint changed; after a label change, those that gained or lost the pod, or
    all of the old and new ones if the endpoint changed as well."""
    if old.metadata.resource_version == new.metadata.resource_version:
        return set()
    pod_changed, labels_changed = pod_endpoints_changed(old, new)
    if not pod_changed and not labels_changed:
        return set()
    services = list(services)
    now = services_for_pod(services, new)
    if not labels_changed:
        return now
    before = services_for_pod(services, old)
    return now | before if pod_changed else now ^ before
