"""The Endpoints controller against the embedded API server on a fake clock (§6)."""

from __future__ import annotations

from typing import Any

import pytest

from kcm.client import Api
from kcm.controllers.endpoint import EndpointController
from kcm.errors import InternalError
from kcm.models.core_v1 import (
    ContainerPort,
    EndpointAddress,
    EndpointPort,
    Endpoints,
    EndpointSubset,
    ObjectReference,
    Pod,
    ServicePort,
)
from kcm.models.meta_v1 import ObjectMeta
from tests.integration.controllers.endpoints.ep_harness import NS, Env, dual_stack, running

pytestmark = pytest.mark.anyio

TRIGGER = "endpoints.kubernetes.io/last-change-trigger-time"
OVER_CAPACITY = "endpoints.kubernetes.io/over-capacity"


def endpoint_controller(batch_period: float = 0.0) -> Any:
    def make(client: Any, factory: Any, clock: Any, recorder: Any) -> EndpointController:
        return EndpointController(
            client, factory, recorder=recorder, clock=clock, batch_period=batch_period
        )

    return make


def ips(addresses: Any) -> list[str]:
    return [a.ip for a in addresses or ()]


def pod_ref(pod: Pod) -> ObjectReference:
    meta = pod.metadata
    return ObjectReference(
        kind="Pod",
        namespace=meta.namespace,
        name=meta.name,
        uid=meta.uid,
        resource_version=meta.resource_version,
    )


def first(ep: Endpoints) -> EndpointSubset:
    assert ep.subsets, f"{ep.metadata.name} has no subsets"
    return ep.subsets[0]


async def endpoints_of(env: Env, name: str) -> Endpoints:
    await env.quiesce()
    found = await env.get_endpoints(name)
    assert found is not None, f"no Endpoints {name}"
    return found


async def test_a_ready_pod_is_an_address_with_node_and_target() -> None:
    async with running(endpoint_controller()) as env:
        await env.service("s", selector={"app": "web"}, labels={"tier": "front"})
        pod = await env.pod("p1", "10.0.0.5")
        ep = await endpoints_of(env, "s")
        assert len(ep.subsets or ()) == 1
        subset = first(ep)
        assert list(subset.addresses or ()) == [
            EndpointAddress(
                ip="10.0.0.5",
                node_name="n1",
                target_ref=first(ep).addresses[0].target_ref,
            )
        ]
        ref = subset.addresses[0].target_ref
        assert ref is not None
        assert (ref.kind, ref.namespace, ref.name, ref.uid) == ("Pod", NS, "p1", pod.metadata.uid)
        assert ref.resource_version == pod.metadata.resource_version
        assert subset.not_ready_addresses is None
        assert [(p.port, p.protocol, p.name) for p in subset.ports or ()] == [(8080, "TCP", None)]
        assert ep.metadata.labels == {"tier": "front"}  # the Service's labels


async def test_not_ready_pods_and_publish_not_ready_addresses() -> None:
    async with running(endpoint_controller()) as env:
        await env.service("s", selector={"app": "web"})
        await env.service("tolerant", selector={"app": "web"}, publish_not_ready_addresses=True)
        await env.pod("p1", "10.0.0.5", ready=False)
        ep = await endpoints_of(env, "s")
        assert ips(first(ep).not_ready_addresses) == ["10.0.0.5"]
        assert first(ep).addresses is None
        tolerant = await endpoints_of(env, "tolerant")
        assert ips(first(tolerant).addresses) == ["10.0.0.5"]
        await env.set_status("p1", ip="10.0.0.5", ready=True)
        ep = await endpoints_of(env, "s")
        assert ips(first(ep).addresses) == ["10.0.0.5"]


async def test_named_target_ports_are_resolved_per_pod() -> None:
    async with running(endpoint_controller()) as env:
        await env.service(
            "s",
            selector={"app": "web"},
            ports=[ServicePort(name="http", port=80, target_port="http")],
        )
        await env.pod("a", "10.0.0.1", ports=[ContainerPort(name="http", container_port=9000)])
        await env.pod("b", "10.0.0.2", ports=[ContainerPort(name="http", container_port=9001)])
        await env.pod("c", "10.0.0.3", ports=[ContainerPort(name="other", container_port=9002)])
        ep = await endpoints_of(env, "s")
        by_port = {
            (p.name, p.port): ips(s.addresses) for s in ep.subsets or () for p in s.ports or ()
        }
        # c has no "http" port
        assert by_port == {("http", 9000): ["10.0.0.1"], ("http", 9001): ["10.0.0.2"]}


async def test_addresses_sharing_ports_are_one_subset_sorted_by_ip() -> None:
    async with running(endpoint_controller()) as env:
        ports = [
            ServicePort(name="http", port=80, target_port=8080),
            ServicePort(name="https", port=443, target_port=8443),
        ]
        await env.service("s", selector={"app": "web"}, ports=ports)
        for name, ip in (("a", "10.0.0.10"), ("b", "10.0.0.9"), ("c", "10.0.0.100")):
            await env.pod(name, ip)
        ep = await endpoints_of(env, "s")
        assert len(ep.subsets or ()) == 1
        subset = first(ep)
        assert ips(subset.addresses) == ["10.0.0.10", "10.0.0.100", "10.0.0.9"]  # byte order
        assert {p.port for p in subset.ports or ()} == {8080, 8443}


async def test_terminating_and_finished_pods() -> None:
    async with running(endpoint_controller()) as env:
        await env.service("s", selector={"app": "web"})
        await env.service("tolerant", selector={"app": "web"}, publish_not_ready_addresses=True)
        await env.pod("going", "10.0.0.1")
        await env.pod("failed", "10.0.0.2", ready=False, phase="Failed", restart_policy="Never")
        await env.pod("failing", "10.0.0.3", ready=False, phase="Failed", restart_policy="Always")
        await env.pod(
            "done", "10.0.0.4", ready=False, phase="Succeeded", restart_policy="OnFailure"
        )
        await env.pods.delete("going")  # bound to a node: terminating until a kubelet ends it
        ep = await endpoints_of(env, "s")
        assert ips(first(ep).addresses) == []
        # Never+Failed and OnFailure+Succeeded are gone for good; Always+Failed may restart
        assert ips(first(ep).not_ready_addresses) == ["10.0.0.3"]
        tolerant = await endpoints_of(env, "tolerant")
        # publishNotReadyAddresses keeps every pod with an IP, terminating ones too
        assert ips(first(tolerant).addresses) == [
            "10.0.0.1",
            "10.0.0.2",
            "10.0.0.3",
            "10.0.0.4",
        ]
        await env.pods.delete("going", grace_period_seconds=0)


async def test_pods_without_ip_or_of_the_wrong_family_are_left_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dual_stack(monkeypatch)
    async with running(endpoint_controller()) as env:
        # headless: the server allocates no IPv6 cluster IP
        await env.service("s", selector={"app": "web"}, ip_families=["IPv6"], cluster_ip="None")
        await env.pod("v4", "10.0.0.1")
        await env.pod("dual", "10.0.0.2", ips=["10.0.0.2", "fd00::2"])
        await env.pod("pending", None)
        ep = await endpoints_of(env, "s")
        assert ips(first(ep).addresses) == ["fd00::2"]


async def test_hostname_when_the_subdomain_names_the_service() -> None:
    async with running(endpoint_controller()) as env:
        await env.service("s", selector={"app": "web"})
        await env.pod("a", "10.0.0.1", hostname="alpha", subdomain="s")
        await env.pod("b", "10.0.0.2", hostname="beta", subdomain="other")
        ep = await endpoints_of(env, "s")
        hosts = {a.ip: a.hostname for a in first(ep).addresses or ()}
        assert hosts == {"10.0.0.1": "alpha", "10.0.0.2": None}


async def test_headless_services_are_labelled_and_portless_ones_get_addresses() -> None:
    async with running(endpoint_controller()) as env:
        await env.service("h", selector={"app": "web"}, cluster_ip="None", ports=[])
        await env.service("portless", selector={"app": "web"}, cluster_ip="None", ports=[])
        await env.pod("a", "10.0.0.1")
        ep = await endpoints_of(env, "h")
        assert ep.metadata.labels == {"service.kubernetes.io/headless": ""}
        assert ips(first(ep).addresses) == ["10.0.0.1"]
        assert first(ep).ports is None


async def test_service_labels_are_copied_and_followed() -> None:
    async with running(endpoint_controller()) as env:
        await env.service("s", selector={"app": "web"}, labels={"a": "1"})
        await env.pod("p", "10.0.0.1")
        ep = await endpoints_of(env, "s")
        assert ep.metadata.labels == {"a": "1"}
        await env.services.patch("s", {"metadata": {"labels": {"a": "2", "b": "3"}}})
        ep = await endpoints_of(env, "s")
        assert ep.metadata.labels == {"a": "2", "b": "3"}


async def test_service_deleted_deletes_its_endpoints() -> None:
    async with running(endpoint_controller()) as env:
        await env.service("s", selector={"app": "web"})
        await env.pod("p", "10.0.0.1")
        await endpoints_of(env, "s")
        await env.services.delete("s")
        await env.quiesce()
        assert await env.get_endpoints("s") is None


async def test_a_service_without_selector_is_left_alone() -> None:
    async with running(endpoint_controller()) as env:
        await env.service("manual")
        await env.endpoints.create(
            Endpoints(
                metadata=ObjectMeta(name="manual", namespace=NS),
                subsets=[
                    EndpointSubset(
                        addresses=[EndpointAddress(ip="192.0.2.1")], ports=[EndpointPort(port=1)]
                    )
                ],
            )
        )
        await env.pod("p", "10.0.0.1")
        before = await endpoints_of(env, "manual")
        await env.services.patch("manual", {"metadata": {"labels": {"x": "y"}}})
        after = await endpoints_of(env, "manual")
        assert after.metadata.resource_version == before.metadata.resource_version


async def test_deleted_endpoints_are_recreated_and_leftovers_go_at_start() -> None:
    async def leftovers(env: Env) -> None:
        # Endpoints whose Service went while no controller ran, and a leader-election lock
        await env.endpoints.create(Endpoints(metadata=ObjectMeta(name="orphan", namespace=NS)))
        annotations = {"control-plane.alpha.kubernetes.io/leader": "x"}
        lock = ObjectMeta(name="lock", namespace=NS, annotations=annotations)
        await env.endpoints.create(Endpoints(metadata=lock))

    async with running(endpoint_controller(), setup=leftovers) as env:
        await env.quiesce()
        assert await env.get_endpoints("orphan") is None
        assert await env.get_endpoints("lock") is not None  # leader-election locks are kept
        await env.service("s", selector={"app": "web"})
        await env.pod("p", "10.0.0.1")
        await endpoints_of(env, "s")
        await env.endpoints.delete("s")
        recreated = await endpoints_of(env, "s")
        assert ips(first(recreated).addresses) == ["10.0.0.1"]


async def test_nothing_is_written_when_nothing_changed() -> None:
    async with running(endpoint_controller()) as env:
        await env.service("s", selector={"app": "web"})
        await env.pod("p", "10.0.0.1")
        before = await endpoints_of(env, "s")
        await env.services.patch("s", {"metadata": {"annotations": {"note": "x"}}})
        await env.pods.patch("p", {"metadata": {"annotations": {"note": "x"}}})
        after = await endpoints_of(env, "s")
        assert after.metadata.resource_version == before.metadata.resource_version


async def test_last_change_trigger_time() -> None:
    async with running(endpoint_controller()) as env:
        service = await env.service("s", selector={"app": "web"})
        created = service.metadata.creation_timestamp
        assert created is not None
        await env.quiesce()
        ep = await endpoints_of(env, "s")
        # first sync: the Service's creation
        assert (ep.metadata.annotations or {})[TRIGGER] == created.strftime("%Y-%m-%dT%H:%M:%SZ")
        await env.clock.advance(30)
        await env.pod("p", "10.0.0.1", ready=False)
        await env.clock.advance(30)
        await env.set_status("p", ip="10.0.0.1", ready=True, since="2030-01-01T00:00:07Z")
        ep = await endpoints_of(env, "s")
        assert (ep.metadata.annotations or {})[TRIGGER] == "2030-01-01T00:00:07Z"


async def test_pod_changes_wait_for_the_batch_period() -> None:
    async with running(endpoint_controller(batch_period=5.0)) as env:
        await env.service("s", selector={"app": "web"})
        await env.quiesce()
        assert (await endpoints_of(env, "s")).subsets is None  # the Service sync is not batched
        await env.pod("a", "10.0.0.1")
        await env.clock.advance(4.9)
        await env.pod("b", "10.0.0.2")
        await env.quiesce()
        assert (await endpoints_of(env, "s")).subsets is None
        await env.clock.advance(0.1)  # 5 s after the first pod: both in one write
        ep = await endpoints_of(env, "s")
        assert ips(first(ep).addresses) == ["10.0.0.1", "10.0.0.2"]


async def test_over_capacity_truncates_and_annotates(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("kcm.controllers.endpoint._subsets.MAX_CAPACITY", 3)
    async with running(endpoint_controller()) as env:
        await env.service("s", selector={"app": "web"})
        for i in range(1, 5):
            await env.pod(f"p{i}", f"10.0.0.{i}", ready=i != 4)
        ep = await endpoints_of(env, "s")
        assert (ep.metadata.annotations or {})[OVER_CAPACITY] == "truncated"
        subset = first(ep)
        assert ips(subset.addresses) == ["10.0.0.1", "10.0.0.2", "10.0.0.3"]  # ready kept first
        assert subset.not_ready_addresses is None
        await env.pods.delete("p4", grace_period_seconds=0)
        await env.pods.delete("p3", grace_period_seconds=0)
        ep = await endpoints_of(env, "s")
        assert OVER_CAPACITY not in (ep.metadata.annotations or {})
        assert ips(first(ep).addresses) == ["10.0.0.1", "10.0.0.2"]


async def test_write_failures_are_reported_and_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    failures = [InternalError("injected", code=500)]
    create = Api.create

    async def failing_create(self: Any, obj: Any, **kwargs: Any) -> Any:
        if isinstance(obj, Endpoints) and failures:
            raise failures.pop()
        return await create(self, obj, **kwargs)

    monkeypatch.setattr(Api, "create", failing_create)
    async with running(endpoint_controller()) as env:
        await env.service("s", selector={"app": "web"})
        await env.quiesce()
        assert await env.get_endpoints("s") is None
        assert env.recorder.events == [
            "Warning FailedToCreateEndpoint Failed to create endpoint for service default/s: "
            "injected"
        ]
        await env.clock.advance(0.005)  # the first retry of the default controller backoff
        await env.quiesce()
        assert await env.get_endpoints("s") is not None
