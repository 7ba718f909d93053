"""The EndpointSlice controller against the embedded API server on a fake clock (§7)."""

from __future__ import annotations

from typing import Any

import pytest

from kcm.controllers.endpointslice import EndpointSliceController
from kcm.models.core_v1 import ContainerPort, ServicePort
from kcm.models.discovery_v1 import Endpoint, EndpointConditions, EndpointSlice
from tests.integration.controllers.endpoints.ep_harness import Env, dual_stack, running

pytestmark = pytest.mark.anyio

MANAGED = {"endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"}


def slice_controller(**options: Any) -> Any:
    def make(client: Any, factory: Any, clock: Any, recorder: Any) -> EndpointSliceController:
        return EndpointSliceController(client, factory, recorder=recorder, clock=clock, **options)

    return make


def addresses(slices: list[EndpointSlice]) -> list[str]:
    return sorted(a for s in slices for e in s.endpoints or () for a in e.addresses or ())


def only(slices: list[EndpointSlice]) -> EndpointSlice:
    assert len(slices) == 1, [s.metadata.name for s in slices]
    return slices[0]


def endpoint(slices: list[EndpointSlice], ip: str) -> Endpoint:
    return next(e for s in slices for e in s.endpoints or () if ip in (e.addresses or ()))


async def settled(env: Env, service: str) -> list[EndpointSlice]:
    await env.quiesce()
    return await env.slices_of(service)


async def test_a_ready_pod_on_a_zoned_node() -> None:
    async with running(slice_controller()) as env:
        await env.node("n1", zone="z1")
        service = await env.service("s", selector={"app": "web"}, labels={"tier": "front"})
        pod = await env.pod("p1", "10.0.0.5", hostname="h", subdomain="s")
        es = only(await settled(env, "s"))
        assert (es.metadata.generate_name or "") == "s-"
        assert (es.metadata.name or "").startswith("s-")
        assert es.metadata.labels == {
            "tier": "front",
            "kubernetes.io/service-name": "s",
            **MANAGED,
        }
        assert es.address_type == "IPv4"
        refs = es.metadata.owner_references or ()
        assert [
            (r.api_version, r.kind, r.name, r.uid, r.controller, r.block_owner_deletion)
            for r in refs
        ] == [("v1", "Service", "s", service.metadata.uid, True, True)]
        assert [(p.name, p.port, p.protocol) for p in es.ports or ()] == [("", 8080, "TCP")]
        ep = only_endpoint(es)
        assert list(ep.addresses or ()) == ["10.0.0.5"]
        assert ep.conditions is not None
        assert (ep.conditions.ready, ep.conditions.serving, ep.conditions.terminating) == (
            True,
            True,
            False,
        )
        assert (ep.node_name, ep.zone, ep.hostname) == ("n1", "z1", "h")
        assert ep.target_ref is not None
        assert (ep.target_ref.kind, ep.target_ref.name, ep.target_ref.uid) == (
            "Pod",
            "p1",
            pod.metadata.uid,
        )


def only_endpoint(es: EndpointSlice) -> Endpoint:
    assert len(es.endpoints or ()) == 1
    return (es.endpoints or ())[0]


async def test_no_pods_gives_one_placeholder_slice() -> None:
    async with running(slice_controller()) as env:
        await env.service("s", selector={"app": "web"})
        es = only(await settled(env, "s"))
        assert not es.endpoints
        assert not es.ports
        name = es.metadata.name
        await env.services.patch("s", {"metadata": {"annotations": {"x": "y"}}})
        assert only(await settled(env, "s")).metadata.name == name  # kept, not re-created


async def test_terminating_and_not_ready_conditions() -> None:
    async with running(slice_controller()) as env:
        await env.node("n1")
        await env.service("s", selector={"app": "web"})
        await env.service("pub", selector={"app": "web"}, publish_not_ready_addresses=True)
        await env.pod("going", "10.0.0.1")
        await env.pod("unready", "10.0.0.2", ready=False)
        await env.pods.delete("going")  # bound to a node: terminating until a kubelet ends it
        slices = await settled(env, "s")
        conditions = {ip: endpoint(slices, ip).conditions for ip in ("10.0.0.1", "10.0.0.2")}
        going, unready = conditions["10.0.0.1"], conditions["10.0.0.2"]
        assert going is not None
        assert unready is not None
        assert (going.ready, going.serving, going.terminating) == (False, True, True)
        assert (unready.ready, unready.serving, unready.terminating) == (False, False, False)
        published = await settled(env, "pub")
        # publishNotReadyAddresses: ready whatever the pod says
        assert endpoint(published, "10.0.0.1").conditions == EndpointConditions(
            ready=True, serving=True, terminating=True
        )
        assert endpoint(published, "10.0.0.2").conditions == EndpointConditions(
            ready=True, serving=False, terminating=False
        )
        await env.pods.delete("going", grace_period_seconds=0)
        assert addresses(await settled(env, "s")) == ["10.0.0.2"]


async def test_slices_hold_at_most_max_endpoints_and_are_filled_before_new_ones() -> None:
    async with running(slice_controller(max_endpoints_per_slice=3)) as env:
        await env.node("n1")
        await env.service("s", selector={"app": "web"})
        for i in range(1, 6):
            await env.pod(f"p{i}", f"10.0.0.{i}")
        slices = await settled(env, "s")
        assert sorted(len(s.endpoints or ()) for s in slices) == [2, 3]
        assert addresses(slices) == [f"10.0.0.{i}" for i in range(1, 6)]
        names = {s.metadata.name for s in slices}
        await env.pod("p6", "10.0.0.6")
        slices = await settled(env, "s")
        assert {s.metadata.name for s in slices} == names  # the free place was used
        assert sorted(len(s.endpoints or ()) for s in slices) == [3, 3]
        await env.pod("p7", "10.0.0.7")
        assert sorted(len(s.endpoints or ()) for s in await settled(env, "s")) == [1, 3, 3]


async def test_pods_there_at_start_are_packed_into_full_slices() -> None:
    # (150 pods at the default 100 per slice: tests/unit/controllers/test_endpointslice_plan.py)
    async def cluster(env: Env) -> None:  # in place before the controller starts
        await env.node("n1")
        await env.service("s", selector={"app": "web"})
        for i in range(15):
            await env.pod(f"p{i}", f"10.0.0.{i + 1}")

    async with running(slice_controller(max_endpoints_per_slice=10), setup=cluster) as env:
        slices = await settled(env, "s")
        assert sorted(len(s.endpoints or ()) for s in slices) == [5, 10]
        assert len(set(addresses(slices))) == 15


async def test_a_pod_on_a_missing_node_is_left_out_with_a_warning() -> None:
    async with running(slice_controller()) as env:
        await env.node("n1")
        await env.service("s", selector={"app": "web"})
        await env.pod("here", "10.0.0.1")
        await env.pod("lost", "10.0.0.2", node="gone")
        assert addresses(await settled(env, "s")) == ["10.0.0.1"]
        assert any(
            e.startswith(
                "Warning FailedToUpdateEndpointSlices Error updating Endpoint Slices "
                "for Service default/s: skipping Pod lost for Service default/s: "
                "Node gone Not Found"
            )
            for e in env.recorder.events
        ), env.recorder.events
        await env.node("gone")
        await env.clock.advance(1)  # the retry (1 s backoff) finds the node
        assert addresses(await settled(env, "s")) == ["10.0.0.1", "10.0.0.2"]


async def test_hand_deleted_and_edited_slices_are_repaired() -> None:
    async with running(slice_controller()) as env:
        await env.node("n1")
        await env.service("s", selector={"app": "web"})
        await env.pod("p", "10.0.0.1")
        es = only(await settled(env, "s"))
        await env.slices.patch(str(es.metadata.name), {"endpoints": []})
        await env.quiesce()
        await env.clock.advance(1)  # a slice change syncs its Service after 1 s
        assert addresses(await settled(env, "s")) == ["10.0.0.1"]
        await env.slices.delete(str(es.metadata.name))
        await env.quiesce()
        assert await env.slices_of("s") == []
        await env.clock.advance(1)
        repaired = only(await settled(env, "s"))
        assert addresses([repaired]) == ["10.0.0.1"]
        assert repaired.metadata.name != es.metadata.name


async def test_port_groups_and_named_ports() -> None:
    async with running(slice_controller()) as env:
        await env.node("n1")
        http = ServicePort(name="http", port=80, target_port="http")
        await env.service("s", selector={"app": "web"}, ports=[http])
        await env.pod("a", "10.0.0.1", ports=[ContainerPort(name="http", container_port=8080)])
        await env.pod("b", "10.0.0.2", ports=[ContainerPort(name="http", container_port=9090)])
        await env.pod("c", "10.0.0.3", ports=[ContainerPort(name="web", container_port=80)])
        slices = await settled(env, "s")
        by_ports = {tuple((p.name, p.port) for p in s.ports or ()): addresses([s]) for s in slices}
        assert by_ports == {
            (("http", 8080),): ["10.0.0.1"],
            (("http", 9090),): ["10.0.0.2"],
            (): ["10.0.0.3"],  # no "http" port: an endpoint without ports
        }


async def test_dual_stack_services_get_a_slice_per_family(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dual_stack(monkeypatch)
    async with running(slice_controller()) as env:
        await env.node("n1")
        await env.service("s", selector={"app": "web"}, ip_families=["IPv4", "IPv6"])
        await env.pod("p", "10.0.0.1", ips=["10.0.0.1", "fd00::1"])
        slices = await settled(env, "s")
        assert {s.address_type: addresses([s]) for s in slices} == {
            "IPv4": ["10.0.0.1"],
            "IPv6": ["fd00::1"],
        }
        await env.services.patch("s", {"spec": {"ipFamilies": ["IPv4"]}})  # a downgrade
        slices = await settled(env, "s")
        assert [s.address_type for s in slices] == ["IPv4"]  # the IPv6 slice is deleted


async def test_labels_follow_the_service_and_headless_is_marked() -> None:
    async with running(slice_controller()) as env:
        await env.node("n1")
        await env.service("h", selector={"app": "web"}, cluster_ip="None", labels={"a": "1"})
        await env.pod("p", "10.0.0.1")
        slices = await settled(env, "h")
        assert {s.address_type for s in slices} == {"IPv4"}  # the server's: ipFamilies [IPv4]
        es = next(s for s in slices if s.address_type == "IPv4")
        assert es.metadata.labels == {
            "a": "1",
            "service.kubernetes.io/headless": "",
            "kubernetes.io/service-name": "h",
            **MANAGED,
        }
        await env.services.patch("h", {"metadata": {"labels": {"a": "2"}}})
        slices = await settled(env, "h")
        assert all((s.metadata.labels or {}).get("a") == "2" for s in slices)


async def test_services_without_selector_get_no_slices() -> None:
    async with running(slice_controller()) as env:
        await env.service("manual")
        await env.quiesce()
        assert await env.slices_of("manual") == []


async def test_pod_changes_wait_for_the_batch_period() -> None:
    async with running(slice_controller(batch_period=2.0)) as env:
        await env.node("n1")
        await env.service("s", selector={"app": "web"})
        await settled(env, "s")
        await env.pod("a", "10.0.0.1")
        await env.clock.advance(1.9)
        assert addresses(await settled(env, "s")) == []
        await env.clock.advance(0.1)
        assert addresses(await settled(env, "s")) == ["10.0.0.1"]


async def test_trigger_time_annotation() -> None:
    async with running(slice_controller()) as env:
        await env.node("n1")
        await env.service("s", selector={"app": "web"})
        created = only(await settled(env, "s"))
        trigger = "endpoints.kubernetes.io/last-change-trigger-time"
        assert (created.metadata.annotations or {}).get(trigger)
        await env.pod("p", "10.0.0.1", ready=False)
        await env.set_status("p", ip="10.0.0.1", ready=True, since="2031-02-03T04:05:06Z")
        es = only(await settled(env, "s"))
        assert (es.metadata.annotations or {})[trigger] == "2031-02-03T04:05:06Z"


async def test_slices_of_a_recreated_service_are_replaced() -> None:
    async with running(slice_controller()) as env:
        await env.node("n1")
        await env.service("s", selector={"app": "web"})
        await env.pod("p", "10.0.0.1")
        old = only(await settled(env, "s"))
        await env.services.delete("s")
        new = await env.service("s", selector={"app": "web"})
        slices = await settled(env, "s")
        # the old Service's slice (no garbage collector runs here) is not the new one's: it
        # is deleted, not reused
        es = only(slices)
        assert es.metadata.name != old.metadata.name
        assert [r.uid for r in es.metadata.owner_references or ()] == [new.metadata.uid]
        assert addresses(slices) == ["10.0.0.1"]
