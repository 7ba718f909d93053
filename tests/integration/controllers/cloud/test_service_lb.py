"""The service (load-balancer) controller on a FakeCloud against the embedded API server:
(§18: scenario 3) and its failure paths."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.cloudprovider import LOAD_BALANCER_CLEANUP_FINALIZER, FakeCloud
from kcm.controllers.service import ServiceController
from kcm.errors import ImplementedElsewhere, NotFound
from kcm.informers import SharedInformerFactory
from kcm.models.core_v1 import Node, Service, Taint
from kcm.testing import FakeClock, FakeRecorder

from .cloud_harness import Env, create_node, node, running
from .lb_services import ingress_ips, lb_service

pytestmark = pytest.mark.anyio


TO_CLUSTER_IP = {
    "spec": {
        "type": "ClusterIP",
        "ports": [{"port": 80, "protocol": "TCP"}],
        "allocateLoadBalancerNodePorts": None,
        "externalTrafficPolicy": None,
    }
}
"""A merge patch turning a LoadBalancer Service into a ClusterIP one (what the API server
requires: no node ports, no LB-only fields)."""


def make(cloud: FakeCloud, clock: FakeClock, recorder: FakeRecorder) -> Any:
    def build(client: ApiClient, factory: SharedInformerFactory) -> ServiceController:
        return ServiceController(client, factory, recorder=recorder, cloud=cloud, clock=clock)

    return build


async def get(env: Env, name: str = "web") -> Service:
    return await env.client.api(Service, "default").get(name)


async def test_a_balancer_is_ensured_then_deleted_when_the_type_changes(
    api_server: ApiServer,
) -> None:
    cloud, clock, recorder = FakeCloud(), FakeClock(), FakeRecorder()
    async with running(api_server, clock, make(cloud, clock, recorder)) as env:
        await create_node(env.client, node("n1"))
        await env.client.api(Service, "default").create(lb_service())
        await env.quiesce()
        svc = await get(env)
        assert LOAD_BALANCER_CLEANUP_FINALIZER in (svc.metadata.finalizers or ())
        assert ingress_ips(svc) == ["1.2.3.4"]
        assert cloud.called("ensure_load_balancer")[-1].args[2] == ("n1",)
        assert recorder.events[:2] == [
            "Normal EnsuringLoadBalancer Ensuring load balancer",
            "Normal EnsuredLoadBalancer Ensured load balancer",
        ]
        recorder.clear()

        await env.client.api(Service, "default").patch("web", TO_CLUSTER_IP)
        await env.quiesce()
        svc = await get(env)
        assert len(cloud.called("ensure_load_balancer_deleted")) == 1
        assert LOAD_BALANCER_CLEANUP_FINALIZER not in (svc.metadata.finalizers or ())
        assert ingress_ips(svc) == []
        assert "Normal Type LoadBalancer -> ClusterIP" in recorder.events
        assert recorder.events[-2:] == [
            "Normal DeletingLoadBalancer Deleting load balancer",
            "Normal DeletedLoadBalancer Deleted load balancer",
        ]
        assert cloud.balancers == {}


async def test_a_deleted_service_is_kept_until_its_balancer_is_gone(api_server: ApiServer) -> None:
    cloud, clock, recorder = FakeCloud(), FakeClock(), FakeRecorder()
    async with running(api_server, clock, make(cloud, clock, recorder)) as env:
        await create_node(env.client, node("n1"))
        api = env.client.api(Service, "default")
        await api.create(lb_service())
        await env.quiesce()
        cloud.fail("ensure_load_balancer_deleted", RuntimeError("cloud is down"), times=1)
        await api.delete("web")
        await env.quiesce()
        svc = await get(env)  # the finalizer holds it: the delete failed
        assert svc.metadata.deletion_timestamp is not None
        assert (
            "Warning SyncLoadBalancerFailed Error syncing load balancer: failed to delete "
            "load balancer: cloud is down"
        ) in recorder.events
        await clock.advance(5)  # the first retry (5 s backoff)
        await env.quiesce()
        with pytest.raises(NotFound):
            await get(env)
        assert cloud.balancers == {}


async def test_ensure_failure_is_an_event_and_retries_with_backoff(api_server: ApiServer) -> None:
    cloud, clock, recorder = FakeCloud(), FakeClock(), FakeRecorder()
    cloud.fail("ensure_load_balancer", RuntimeError("quota exceeded"), times=2)
    async with running(api_server, clock, make(cloud, clock, recorder)) as env:
        await create_node(env.client, node("n1"))
        await env.client.api(Service, "default").create(lb_service())
        await env.quiesce()
        failed = (
            "Warning SyncLoadBalancerFailed Error syncing load balancer: failed to ensure "
            "load balancer: quota exceeded"
        )
        assert recorder.events.count(failed) == 1
        assert ingress_ips(await get(env)) == []
        await clock.advance(4.9)  # backoff 5 s: not yet
        await env.quiesce()
        assert len(cloud.called("ensure_load_balancer")) == 1
        await clock.advance(0.1)
        await env.quiesce()
        assert recorder.events.count(failed) == 2
        await clock.advance(9.9)  # then 10 s
        await env.quiesce()
        assert len(cloud.called("ensure_load_balancer")) == 2
        await clock.advance(0.1)
        await env.quiesce()
        assert len(cloud.called("ensure_load_balancer")) == 3
        assert ingress_ips(await get(env)) == ["1.2.3.4"]
        assert recorder.events[-1] == "Normal EnsuredLoadBalancer Ensured load balancer"


async def test_implemented_elsewhere_is_skipped_silently(api_server: ApiServer) -> None:
    cloud, clock, recorder = FakeCloud(), FakeClock(), FakeRecorder()
    cloud.fail("ensure_load_balancer", ImplementedElsewhere("another controller"))
    async with running(api_server, clock, make(cloud, clock, recorder)) as env:
        await create_node(env.client, node("n1"))
        await env.client.api(Service, "default").create(lb_service())
        await env.quiesce()
        await clock.advance(600)
        await env.quiesce()
        assert len(cloud.called("ensure_load_balancer")) == 1  # no retry
        assert recorder.events == ["Normal EnsuringLoadBalancer Ensuring load balancer"]
        assert ingress_ips(await get(env)) == []


async def test_services_with_a_class_or_another_type_are_left_alone(api_server: ApiServer) -> None:
    cloud, clock, recorder = FakeCloud(), FakeClock(), FakeRecorder()
    async with running(api_server, clock, make(cloud, clock, recorder)) as env:
        api = env.client.api(Service, "default")
        await api.create(lb_service("classy", load_balancer_class="example.com/lb"))
        await api.create(lb_service("plain", type="ClusterIP"))
        await env.quiesce()
        assert cloud.calls == []
        assert recorder.events == []


async def test_only_eligible_nodes_are_hosts_and_node_changes_resync_them(
    api_server: ApiServer,
) -> None:
    cloud, clock, recorder = FakeCloud(), FakeClock(), FakeRecorder()
    async with running(api_server, clock, make(cloud, clock, recorder)) as env:
        excluded = {"node.kubernetes.io/exclude-from-external-load-balancers": ""}
        await create_node(env.client, node("a-ready"))
        await create_node(env.client, node("b-excluded", labels=excluded))
        await create_node(env.client, node("c-not-ready", ready="False"))
        await create_node(env.client, node("d-no-conditions", ready=None))
        autoscaled = Taint(key="ToBeDeletedByClusterAutoscaler", effect="NoSchedule")
        await create_node(env.client, node("e-scaling-down", taints=[autoscaled]))
        await env.client.api(Service, "default").create(lb_service())
        await env.quiesce()
        assert cloud.called("ensure_load_balancer")[-1].args[2] == ("a-ready",)
        recorder.clear()

        nodes = env.client.api(Node)
        current = await nodes.get("c-not-ready")
        assert current.status is not None
        ready = msgspec.structs.replace(
            current,
            status=msgspec.structs.replace(
                current.status,
                conditions=[msgspec.structs.replace(current.status.conditions[0], status="True")],  # type: ignore[index]
            ),
        )
        await nodes.replace_status(ready)
        await env.quiesce()
        assert cloud.called("update_load_balancer")[-1].args[2] == ("a-ready", "c-not-ready")
        assert recorder.events == [
            "Normal UpdatedLoadBalancer Updated load balancer with new hosts"
        ]

        # a label change that leaves the eligible set alone does no full sync
        await nodes.patch("a-ready", {"metadata": {"labels": {"team": "x"}}})
        await env.quiesce()
        assert len(cloud.called("update_load_balancer")) == 1


async def test_a_failed_host_update_is_retried_on_the_next_round(api_server: ApiServer) -> None:
    cloud, clock, recorder = FakeCloud(), FakeClock(), FakeRecorder()
    async with running(api_server, clock, make(cloud, clock, recorder)) as env:
        await create_node(env.client, node("n1"))
        await env.client.api(Service, "default").create(lb_service())
        await env.quiesce()
        cloud.fail("update_load_balancer", RuntimeError("busy"), times=1)
        await create_node(env.client, node("n2"))
        await env.quiesce()
        assert any(e.startswith("Warning UpdateLoadBalancerFailed") for e in recorder.events)
        await clock.advance(100)  # the periodic host sync retries it
        await env.quiesce()
        assert cloud.balancers[next(iter(cloud.balancers))].hosts == ("n1", "n2")
