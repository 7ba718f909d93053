"""Node IPAM against the embedded API server, and the simulated kubelet using its CIDRs."""

from __future__ import annotations

import ipaddress
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import msgspec
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers.nodeipam import IPAMSettings, NodeIpamController
from kcm.informers import SharedInformerFactory
from kcm.models import Container, Node, NodeSpec, ObjectMeta, Pod, PodSpec
from kcm.simulation import SimulatedCluster, SimulationConfig
from kcm.testing import FakeClock, FakeRecorder, client_config_for, eventually

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def running(
    server: ApiServer, settings: IPAMSettings, *, sim: SimulationConfig | None = None
) -> AsyncIterator[tuple[ApiClient, NodeIpamController, FakeRecorder]]:
    clock = FakeClock()
    recorder = FakeRecorder()
    config = msgspec.structs.replace(client_config_for(server), qps=-1)
    async with ApiClient(config) as client, anyio.create_task_group() as tg:
        factory = SharedInformerFactory(client, clock=clock)
        ipam = NodeIpamController(
            client, factory, recorder=recorder, settings=settings, clock=clock
        )
        tg.start_soon(factory.run)
        if sim is not None:
            await tg.start(SimulatedCluster(client, factory, config=sim, clock=clock).run)
        await tg.start(ipam.run)
        yield client, ipam, recorder
        tg.cancel_scope.cancel()


async def _cidrs(client: ApiClient, name: str) -> tuple[str | None, list[str]]:
    spec = (await client.api(Node).get(name)).spec or NodeSpec()
    return spec.pod_cidr, list(spec.pod_cidrs or ())


async def test_nodes_get_cidrs_once_skipping_taken_and_service_ranges(
    api_server: ApiServer,
) -> None:
    nodes_api = None
    async with ApiClient(client_config_for(api_server)) as pre:
        nodes_api = pre.api(Node)
        await nodes_api.create(
            Node(
                metadata=ObjectMeta(name="old"),
                spec=NodeSpec(pod_cidr="10.10.0.0/24", pod_cidrs=["10.10.0.0/24"]),
            )
        )
    settings = IPAMSettings.from_flags(
        cluster_cidr="10.10.0.0/22,fd00:10::/62",
        service_cluster_ip_range="10.10.1.0/24",
    )
    async with running(api_server, settings) as (client, ipam, recorder):
        nodes = client.api(Node)
        await nodes.create(Node(metadata=ObjectMeta(name="a")))

        async def allocated() -> bool:
            return (await _cidrs(client, "a"))[1] != []

        await eventually(allocated)
        assert await _cidrs(client, "a") == ("10.10.2.0/24", ["10.10.2.0/24", "fd00:10::/64"])
        await nodes.create(Node(metadata=ObjectMeta(name="b")))
        await eventually(lambda: _has(client, "b"))
        assert (await _cidrs(client, "b"))[0] == "10.10.3.0/24"
        assert await _cidrs(client, "old") == ("10.10.0.0/24", ["10.10.0.0/24"])
        await nodes.create(Node(metadata=ObjectMeta(name="c")))
        await eventually(
            lambda: (
                "Normal CIDRNotAvailable Node c status is now: CIDRNotAvailable" in recorder.events
            )
        )
        assert await _cidrs(client, "c") == (None, [])
        await nodes.delete("b")  # its subnet is freed; the waiting node's next update takes it
        await eventually(lambda: ipam.sets[0].used != 4)
        await nodes.patch("c", {"metadata": {"labels": {"touched": "yes"}}})
        await eventually(lambda: _has(client, "c"))
        assert (await _cidrs(client, "c"))[0] == "10.10.3.0/24"


async def _has(client: ApiClient, name: str) -> bool:
    return (await _cidrs(client, name))[1] != []


async def test_simulated_pods_get_ips_from_the_cidr_node_ipam_gave(api_server: ApiServer) -> None:
    settings = IPAMSettings.from_flags(cluster_cidr="10.32.0.0/16", node_cidr_mask_size=26)
    sim = SimulationConfig(nodes=2, assign_pod_cidrs=False, pod_start_delay=0)
    async with running(api_server, settings, sim=sim) as (client, _, _rec):
        await eventually(lambda: _has(client, "kcm-node-1"))
        await eventually(lambda: _has(client, "kcm-node-2"))
        pods = client.api(Pod, "default")
        for i in range(4):
            await pods.create(
                Pod(
                    metadata=ObjectMeta(name=f"p{i}"),
                    spec=PodSpec(containers=[Container(name="c", image="busybox")]),
                )
            )

        async def all_have_ips() -> bool:
            items = (await pods.list()).items
            return len(items) == 4 and all(p.status and p.status.pod_ip for p in items)

        await eventually(all_have_ips)
        for p in (await pods.list()).items:
            assert p.spec is not None
            assert p.status is not None
            cidr, _ = await _cidrs(client, p.spec.node_name or "")
            assert cidr is not None
            assert cidr.endswith("/26")
            assert ipaddress.ip_address(p.status.pod_ip or "") in ipaddress.ip_network(cidr)
