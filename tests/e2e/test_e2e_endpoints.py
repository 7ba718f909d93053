"""``kcm`` in embedded mode, driven with kubectl: a Deployment exposed as a Service gets
Endpoints and EndpointSlices with its pods' IPs (from the simulated nodes' pod CIDRs), and
they follow scaling, readiness, pod deletion and the Service's deletion."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.e2e_harness import Kubectl, Process, embedded_kcm, needs_kubectl, wait_for

pytestmark = needs_kubectl


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Process, Kubectl]]:
    with embedded_kcm(tmp_path_factory.mktemp("e2e-endpoints")) as running:
        yield running
        process, _ = running
        assert process.stop() == 0, process.logs()


def running_pod_ips(kubectl: Kubectl) -> dict[str, str]:
    """Pod name -> IP of the Running web pods that are not being deleted."""
    return {
        p["metadata"]["name"]: p["status"]["podIP"]
        for p in kubectl.items("pods", "-l", "app=web")
        if p["status"].get("phase") == "Running"
        and p["status"].get("podIP")
        and not p["metadata"].get("deletionTimestamp")
    }


def endpoints_ips(kubectl: Kubectl) -> tuple[list[str], list[str]]:
    """(ready, not ready) addresses of Endpoints web."""
    found = kubectl.run("get", "endpoints", "web", "--ignore-not-found", "-o", "json")
    if not found:
        return [], []
    subsets: list[dict[str, Any]] = kubectl.json("get", "endpoints", "web").get("subsets") or []
    ready = sorted(a["ip"] for s in subsets for a in s.get("addresses") or [])
    not_ready = sorted(a["ip"] for s in subsets for a in s.get("notReadyAddresses") or [])
    return ready, not_ready


def slice_endpoints(kubectl: Kubectl) -> dict[str, bool]:
    """Address -> ready, over the EndpointSlices of web."""
    slices = kubectl.items("endpointslices", "-l", "kubernetes.io/service-name=web")
    return {
        e["addresses"][0]: bool(e["conditions"].get("ready"))
        for s in slices
        for e in s.get("endpoints") or []
    }


def in_sync(kubectl: Kubectl, n: int) -> dict[str, str] | None:
    """The pod IPs once ``n`` web pods run and both Endpoints and EndpointSlices list exactly
    them as ready."""
    pods = running_pod_ips(kubectl)
    ips = sorted(pods.values())
    if len(ips) != n:
        return None
    if endpoints_ips(kubectl) != (ips, []):
        return None
    if slice_endpoints(kubectl) != dict.fromkeys(ips, True):
        return None
    return pods


def test_endpoints_and_slices_follow_the_pods_of_an_exposed_deployment(
    cluster: tuple[Process, Kubectl],
) -> None:
    _, kubectl = cluster
    kubectl.run("create", "deployment", "web", "--image=nginx", "--replicas=2")
    kubectl.run("expose", "deployment", "web", "--port", "80")
    pods = wait_for("Endpoints and EndpointSlices with the 2 pod IPs", lambda: in_sync(kubectl, 2))

    # each pod's IP comes from its node's podCIDR
    nodes = {n["metadata"]["name"]: n for n in kubectl.items("nodes")}
    for pod in kubectl.items("pods", "-l", "app=web"):
        cidr = ipaddress.ip_network(nodes[pod["spec"]["nodeName"]]["spec"]["podCIDR"])
        assert ipaddress.ip_address(pod["status"]["podIP"]) in cidr

    listed = kubectl.run("get", "endpoints,endpointslices")
    assert "endpoints/web" in listed
    assert "endpointslice.discovery.k8s.io/web-" in listed
    wide = kubectl.run(
        "get", "endpoints", "web", "-o", "jsonpath={.subsets[*].addresses[*].ip}"
    ).split()
    assert sorted(wide) == sorted(pods.values())
    slices = kubectl.items("endpointslices", "-l", "kubernetes.io/service-name=web")
    assert [s["addressType"] for s in slices] == ["IPv4"]
    assert slices[0]["metadata"]["labels"]["endpointslice.kubernetes.io/managed-by"] == (
        "endpointslice-controller.k8s.io"
    )
    assert [(p["port"], p["protocol"]) for p in slices[0]["ports"]] == [(80, "TCP")]

    kubectl.run("scale", "deployment/web", "--replicas=3")
    pods = wait_for("3 pod IPs", lambda: in_sync(kubectl, 3))

    # a failing readiness probe (simulated) moves the pod to notReadyAddresses
    name, ip = sorted(pods.items())[0]
    kubectl.run("annotate", "pod", name, "kcm.dev/simulate-ready=false")
    others = sorted(v for k, v in pods.items() if k != name)
    wait_for(
        "the unready pod among notReadyAddresses",
        lambda: (
            endpoints_ips(kubectl) == (others, [ip])
            and slice_endpoints(kubectl) == {**dict.fromkeys(others, True), ip: False}
        ),
    )

    # deleting it: the Deployment replaces it and both lists follow
    kubectl.run("delete", "pod", name, "--wait=false")
    pods = wait_for("the replacement pod's IP", lambda: in_sync(kubectl, 3))
    assert name not in pods

    kubectl.run("delete", "service", "web")
    wait_for("the Endpoints to go", lambda: endpoints_ips(kubectl) == ([], []))
    wait_for("the EndpointSlices to go (garbage collector)", lambda: slice_endpoints(kubectl) == {})
    kubectl.run("delete", "deployment", "web")


def test_a_selectorless_service_gets_its_endpoints_mirrored(
    cluster: tuple[Process, Kubectl],
) -> None:
    _, kubectl = cluster
    kubectl.run(
        "apply",
        "-f",
        "-",
        input="""
apiVersion: v1
kind: Service
metadata: {name: external, namespace: default}
spec:
  ports: [{name: https, port: 443}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: external, namespace: default}
subsets:
- addresses: [{ip: 192.0.2.10}, {ip: 192.0.2.11}]
  ports: [{name: https, port: 443}]
""",
    )

    def mirrored() -> list[str] | None:
        slices = kubectl.items("endpointslices", "-l", "kubernetes.io/service-name=external")
        ips = sorted(e["addresses"][0] for s in slices for e in s.get("endpoints") or [])
        ok = slices and all(
            s["metadata"]["labels"]["endpointslice.kubernetes.io/managed-by"]
            == "endpointslicemirroring-controller.k8s.io"
            for s in slices
        )
        return ips if ok and ips == ["192.0.2.10", "192.0.2.11"] else None

    wait_for("the mirrored EndpointSlice", mirrored)
    subsets = kubectl.json("get", "endpoints", "external")["subsets"]
    assert sorted(a["ip"] for a in subsets[0]["addresses"]) == ["192.0.2.10", "192.0.2.11"]
    kubectl.run("delete", "service", "external")
    # the Endpoints controller deletes the Endpoints of a deleted Service (hand-written or
    # not), and the mirrored slices go with them
    wait_for(
        "the Endpoints and their mirror to go",
        lambda: (
            kubectl.run("get", "endpoints", "external", "--ignore-not-found") == ""
            and kubectl.items("endpointslices", "-l", "kubernetes.io/service-name=external") == []
        ),
    )
