"""cloud-node and cloud-node-lifecycle on a FakeCloud against the embedded API server
(§18: scenarios 1 and 2) and their failure paths."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.cloudprovider import TAINT_NODE_SHUTDOWN, TAINT_NODE_UNINITIALIZED, FakeCloud
from kcm.controllers.cloudnode import CloudNodeController
from kcm.controllers.cloudnodelifecycle import CloudNodeLifecycleController
from kcm.errors import InstanceNotFound, NotFound
from kcm.informers import SharedInformerFactory
from kcm.models.core_v1 import Node, NodeAddress, Taint
from kcm.testing import FakeClock, FakeRecorder, eventually

from .cloud_harness import Env, create_node, node, running

pytestmark = pytest.mark.anyio

UNINITIALIZED = Taint(key=TAINT_NODE_UNINITIALIZED, value="true", effect="NoSchedule")
OTHER = Taint(key="dedicated", value="db", effect="NoSchedule")
ADDRESSES = (NodeAddress(type="InternalIP", address="10.0.0.1"),)


def make_cloud_node(cloud: FakeCloud, clock: FakeClock, recorder: FakeRecorder) -> Any:
    def build(client: ApiClient, factory: SharedInformerFactory) -> CloudNodeController:
        return CloudNodeController(client, factory, recorder=recorder, cloud=cloud, clock=clock)

    return build


def make_lifecycle(cloud: FakeCloud, clock: FakeClock, recorder: FakeRecorder) -> Any:
    def build(client: ApiClient, factory: SharedInformerFactory) -> CloudNodeLifecycleController:
        return CloudNodeLifecycleController(
            client, factory, recorder=recorder, cloud=cloud, clock=clock
        )

    return build


async def get(env: Env, name: str = "n1") -> Node:
    return await env.client.api(Node).get(name)


def taint_keys(n: Node) -> list[str | None]:
    return [t.key for t in (n.spec.taints if n.spec else None) or ()]


async def test_a_tainted_node_is_initialised_from_instances_v2(api_server: ApiServer) -> None:
    cloud, clock, recorder = FakeCloud(), FakeClock(), FakeRecorder()
    cloud.add_instance("n1", instance_type="m1", zone="z1", region="r1", addresses=ADDRESSES)
    async with running(api_server, clock, make_cloud_node(cloud, clock, recorder)) as env:
        await create_node(env.client, node("n1", taints=[UNINITIALIZED, OTHER]))
        await env.quiesce()
        n = await get(env)
        assert n.spec is not None
        assert n.spec.provider_id == "fake://n1"
        assert taint_keys(n) == ["dedicated"]  # only the cloud taint goes
        labels = n.metadata.labels or {}
        assert {k: labels[k] for k in labels if k != "kubernetes.io/hostname"} == {
            "node.kubernetes.io/instance-type": "m1",
            "beta.kubernetes.io/instance-type": "m1",
            "topology.kubernetes.io/zone": "z1",
            "failure-domain.beta.kubernetes.io/zone": "z1",
            "topology.kubernetes.io/region": "r1",
            "failure-domain.beta.kubernetes.io/region": "r1",
        }
        assert n.status is not None
        assert [(a.type, a.address) for a in n.status.addresses or ()] == [
            ("InternalIP", "10.0.0.1")
        ]
        assert recorder.events == ["Normal Synced Node synced successfully"]
        assert len(cloud.called("instance_metadata")) == 1


async def test_untainted_nodes_are_left_alone(api_server: ApiServer) -> None:
    cloud, clock, recorder = FakeCloud(), FakeClock(), FakeRecorder()
    async with running(api_server, clock, make_cloud_node(cloud, clock, recorder)) as env:
        await create_node(env.client, node("n1"))
        await env.quiesce()
        assert cloud.calls == []


async def test_instances_v1_and_zones_are_used_without_v2(api_server: ApiServer) -> None:
    cloud, clock, recorder = FakeCloud(instances_v2=False), FakeClock(), FakeRecorder()
    cloud.add_instance("n1", instance_type="m2", zone="z2", region="r2", addresses=ADDRESSES)
    async with running(api_server, clock, make_cloud_node(cloud, clock, recorder)) as env:
        await create_node(env.client, node("n1", taints=[UNINITIALIZED]))
        await env.quiesce()
        n = await get(env)
        assert n.spec is not None
        assert n.spec.provider_id == "fake://n1"
        assert (n.metadata.labels or {})["topology.kubernetes.io/zone"] == "z2"
        assert [c.method for c in cloud.calls] == [
            "instance_id",
            "node_addresses_by_provider_id",
            "instance_type_by_provider_id",
            "get_zone_by_provider_id",
        ]


async def test_a_provided_ip_the_cloud_does_not_know_keeps_the_taint(
    api_server: ApiServer,
) -> None:
    cloud, clock, recorder = FakeCloud(), FakeClock(), FakeRecorder()
    cloud.add_instance("n1", instance_type="m1", addresses=ADDRESSES)
    provided = {"alpha.kubernetes.io/provided-node-ip": "10.9.9.9"}
    async with running(api_server, clock, make_cloud_node(cloud, clock, recorder)) as env:
        await create_node(env.client, node("n1", taints=[UNINITIALIZED], annotations=provided))
        await env.quiesce()
        assert taint_keys(await get(env)) == [TAINT_NODE_UNINITIALIZED]
        assert recorder.events == []
        # the cloud learns the address: the retry initialises the node
        cloud.add_instance(
            "n1",
            instance_type="m1",
            addresses=(*ADDRESSES, NodeAddress(type="InternalIP", address="10.9.9.9")),
        )
        await clock.advance(1)
        await env.quiesce()
        assert taint_keys(await get(env)) == []


async def test_a_cloud_failure_is_retried_with_backoff(api_server: ApiServer) -> None:
    cloud, clock, recorder = FakeCloud(), FakeClock(), FakeRecorder()
    cloud.add_instance("n1", instance_type="m1")
    cloud.fail("instance_metadata", RuntimeError("throttled"), times=1)
    async with running(api_server, clock, make_cloud_node(cloud, clock, recorder)) as env:
        await create_node(env.client, node("n1", taints=[UNINITIALIZED]))
        await env.quiesce()
        assert taint_keys(await get(env)) == [TAINT_NODE_UNINITIALIZED]
        await clock.advance(1)
        await env.quiesce()
        assert taint_keys(await get(env)) == []
        assert len(cloud.called("instance_metadata")) == 2


async def test_the_periodic_refresh_updates_addresses_and_repairs_labels(
    api_server: ApiServer,
) -> None:
    cloud, clock, recorder = FakeCloud(), FakeClock(), FakeRecorder()
    cloud.add_instance("n1", addresses=ADDRESSES)
    async with running(api_server, clock, make_cloud_node(cloud, clock, recorder)) as env:
        beta = {"failure-domain.beta.kubernetes.io/zone": "z9"}
        await create_node(env.client, node("n1", labels=beta))
        await env.quiesce()
        cloud.add_instance("n1", addresses=(NodeAddress(type="InternalIP", address="10.0.0.2"),))
        await clock.advance(300)
        [controller] = env.built

        async def refreshed() -> bool:
            return bool(controller.refreshes)

        await eventually(refreshed)
        n = await get(env)
        assert n.status is not None
        assert [a.address for a in n.status.addresses or ()] == ["10.0.0.2"]
        assert (n.metadata.labels or {})["topology.kubernetes.io/zone"] == "z9"


async def passes(env: Env, clock: FakeClock, n: int = 1) -> None:
    [controller] = env.built
    before = controller.passes
    await clock.advance(5)

    async def done() -> bool:
        return bool(controller.passes >= before + n)

    await eventually(done)


async def test_a_not_ready_node_whose_instance_is_gone_is_deleted(api_server: ApiServer) -> None:
    cloud, clock, recorder = FakeCloud(), FakeClock(), FakeRecorder()
    cloud.add_instance("alive")
    cloud.add_instance("ready-but-gone-is-kept")
    async with running(api_server, clock, make_lifecycle(cloud, clock, recorder)) as env:
        await create_node(env.client, node("gone", ready="False"))
        await create_node(env.client, node("alive", ready="Unknown"))
        await create_node(env.client, node("ready", ready="True"))
        await env.quiesce()
        await passes(env, clock)
        with pytest.raises(NotFound):
            await get(env, "gone")
        await get(env, "alive")
        await get(env, "ready")  # Ready nodes are never checked against the cloud
        assert recorder.events == [
            "Normal DeletingNode Deleting node gone because it does not exist in the cloud provider"
        ]
        assert {c.args[0] for c in cloud.called("instance_exists")} == {"gone", "alive"}


async def test_a_shut_down_node_is_tainted_until_it_is_ready(api_server: ApiServer) -> None:
    cloud, clock, recorder = FakeCloud(), FakeClock(), FakeRecorder()
    cloud.add_instance("n1", shutdown=True)
    async with running(api_server, clock, make_lifecycle(cloud, clock, recorder)) as env:
        await create_node(env.client, node("n1", ready="False"))
        await env.quiesce()
        await passes(env, clock)
        n = await get(env)
        assert n.spec is not None
        assert [(t.key, t.effect) for t in n.spec.taints or ()] == [
            (TAINT_NODE_SHUTDOWN, "NoSchedule")
        ]
        assert n.status is not None
        ready = msgspec.structs.replace(
            n,
            status=msgspec.structs.replace(
                n.status,
                conditions=[msgspec.structs.replace(n.status.conditions[0], status="True")],  # type: ignore[index]
            ),
        )
        await env.client.api(Node).replace_status(ready)
        await env.quiesce()
        await passes(env, clock)
        assert taint_keys(await get(env)) == []


async def test_cloud_errors_leave_the_node_alone(api_server: ApiServer) -> None:
    cloud, clock, recorder = FakeCloud(), FakeClock(), FakeRecorder()
    cloud.fail("instance_exists", RuntimeError("api down"))
    cloud.fail("instance_shutdown", InstanceNotFound("?"))
    async with running(api_server, clock, make_lifecycle(cloud, clock, recorder)) as env:
        await create_node(env.client, node("n1", ready="False"))
        await env.quiesce()
        await passes(env, clock)
        await get(env)
        assert recorder.events == []


async def test_both_loops_run_their_first_pass_at_start(api_server: ApiServer) -> None:
    """As Go's ``wait.Until``: the lifecycle monitor and the address refresh run once when the
    controller starts, not a period later (the fake clock never moves here)."""
    cloud, clock, recorder = FakeCloud(), FakeClock(), FakeRecorder()
    async with running(api_server, clock, make_lifecycle(cloud, clock, recorder)) as env:
        [lifecycle] = env.built

        async def monitored() -> bool:
            return bool(lifecycle.passes)

        await eventually(monitored)
    async with running(api_server, clock, make_cloud_node(cloud, clock, recorder)) as env:
        [cloud_node] = env.built

        async def refreshed() -> bool:
            return bool(cloud_node.refreshes)

        await eventually(refreshed)
