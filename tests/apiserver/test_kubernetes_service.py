"""The ``kubernetes`` Service in ``default``, as kube-apiserver's bootstrap controller makes it
(and its Endpoints and EndpointSlice, which only an advertisable address gets)."""

from __future__ import annotations

import httpx
import pytest

from kcm.apiserver import ApiServer
from kcm.apiserver._kubernetes_service import ensure_kubernetes_service
from kcm.apiserver._registry import Registry
from kcm.apiserver._rest import Rest
from kcm.apiserver._store import MemoryBackend, Store
from kcm.clock import SYSTEM_CLOCK

pytestmark = pytest.mark.anyio


async def test_the_service_points_at_the_server(api_server: ApiServer) -> None:
    async with httpx.AsyncClient(base_url=api_server.url) as http:
        service = (await http.get("/api/v1/namespaces/default/services/kubernetes")).json()
        endpoints = await http.get("/api/v1/namespaces/default/endpoints/kubernetes")
    assert service["metadata"]["labels"] == {"component": "apiserver", "provider": "kubernetes"}
    assert service["spec"]["clusterIP"] == "10.0.0.1"
    assert service["spec"]["ports"] == [
        {"name": "https", "port": 443, "protocol": "TCP", "targetPort": api_server.port}
    ]
    assert endpoints.status_code == 404  # loopback is never advertised, as in kube


def test_an_advertised_address_gets_endpoints_and_a_slice() -> None:
    registry = Registry()
    rest = Rest(Store(MemoryBackend()), registry, SYSTEM_CLOCK)
    ns = registry.lookup("", "v1", "namespaces")
    assert ns is not None
    rest.create(ns, None, {"metadata": {"name": "default"}}, {})
    ensure_kubernetes_service(rest, "192.0.2.10", 6443)
    ensure_kubernetes_service(rest, "192.0.2.10", 6443)  # idempotent
    endpoints = rest.store.get(("", "endpoints"), "default", "kubernetes")
    assert endpoints is not None
    assert endpoints["subsets"] == [
        {
            "addresses": [{"ip": "192.0.2.10"}],
            "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}],
        }
    ]
    assert endpoints["metadata"]["labels"] == {"endpointslice.kubernetes.io/skip-mirror": "true"}
    slice_ = rest.store.get(("discovery.k8s.io", "endpointslices"), "default", "kubernetes")
    assert slice_ is not None
    assert slice_["addressType"] == "IPv4"
    assert slice_["endpoints"] == [{"addresses": ["192.0.2.10"], "conditions": {"ready": True}}]
