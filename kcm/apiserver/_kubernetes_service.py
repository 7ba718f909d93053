"""The ``kubernetes`` Service in ``default``: how in-cluster clients find the API server.

kube-apiserver's bootstrap controller (``pkg/controlplane/controller.go``) creates it with the
first address of the service range (kube-apiserver's default range is 10.0.0.0/24, so
10.0.0.1), port 443 ``https`` to the server's own port; its endpoint reconciler writes the
``kubernetes`` Endpoints (labelled not to be mirrored) and EndpointSlice with the advertised
address. kube-apiserver cannot advertise a loopback address (its Endpoints validation refuses
it), so an embedded server on loopback, as it is by default, has the Service and no
Endpoints, exactly like kube-apiserver started with ``--advertise-address=127.0.0.1``.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from ._rest import Rest

__all__ = ["KUBERNETES_SERVICE_IP", "ensure_kubernetes_service"]

KUBERNETES_SERVICE_IP = "10.0.0.1"
_MANAGER = "kube-apiserver"
_NAMESPACE = "default"
_NAME = "kubernetes"


def ensure_kubernetes_service(rest: Rest, host: str, port: int) -> None:
    """Create the Service (and, for an advertisable ``host``, its Endpoints and EndpointSlice)
    where they are missing."""
    _create_missing(rest, "services", _service(port))
    address = _advertised(host)
    if address is None:
        return
    _create_missing(rest, "endpoints", _endpoints(address, port))
    slices = rest.registry.by_storage("discovery.k8s.io", "endpointslices")
    if slices is not None:
        _create_missing(rest, "endpointslices", _endpoint_slice(address, port), group=slices.group)


def _create_missing(rest: Rest, plural: str, body: dict[str, Any], group: str = "") -> None:
    res = rest.registry.by_storage(group, plural)
    if res is None or rest.store.get(res.storage_key, _NAMESPACE, _NAME) is not None:
        return
    rest.create(res, _NAMESPACE, body, {}, manager=_MANAGER)


def _advertised(host: str) -> str | None:
    """The address kube-apiserver would advertise: a concrete, non-loopback IP."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return None
    return None if ip.is_loopback or ip.is_unspecified else str(ip)


def _https(port: int) -> dict[str, Any]:
    return {"name": "https", "port": port, "protocol": "TCP"}


def _service(port: int) -> dict[str, Any]:
    return {
        "metadata": {
            "name": _NAME,
            "namespace": _NAMESPACE,
            "labels": {"component": "apiserver", "provider": "kubernetes"},
        },
        "spec": {
            "ports": [{**_https(443), "targetPort": port}],
            "clusterIP": KUBERNETES_SERVICE_IP,
            "clusterIPs": [KUBERNETES_SERVICE_IP],
            "type": "ClusterIP",
            "sessionAffinity": "None",
            "ipFamilies": ["IPv4"],
            "ipFamilyPolicy": "SingleStack",
            "internalTrafficPolicy": "Cluster",
        },
    }


def _endpoints(address: str, port: int) -> dict[str, Any]:
    return {
        "metadata": {
            "name": _NAME,
            "namespace": _NAMESPACE,
            "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"},
        },
        "subsets": [{"addresses": [{"ip": address}], "ports": [_https(port)]}],
    }


def _endpoint_slice(address: str, port: int) -> dict[str, Any]:
    version = ipaddress.ip_address(address).version
    return {
        "metadata": {
            "name": _NAME,
            "namespace": _NAMESPACE,
            "labels": {"kubernetes.io/service-name": _NAME},
        },
        "addressType": "IPv6" if version == 6 else "IPv4",
        "endpoints": [{"addresses": [address], "conditions": {"ready": True}}],
        "ports": [_https(port)],
    }
