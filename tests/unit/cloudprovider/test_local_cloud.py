"""The local cloud: its address pool, balancers, instances and config file."""

from __future__ import annotations

import pytest

from kcm.cloudprovider import LocalCloud, new_local_cloud, parse_address_pool
from kcm.errors import ConfigError, InstanceNotFound
from kcm.models.core_v1 import Node, NodeAddress, NodeStatus, Service, ServiceSpec
from kcm.models.meta_v1 import ObjectMeta

pytestmark = pytest.mark.anyio


def svc(uid: str, ip: str | None = None) -> Service:
    return Service(
        metadata=ObjectMeta(name=f"s{uid}", namespace="default", uid=uid),
        spec=ServiceSpec(type="LoadBalancer", load_balancer_ip=ip),
    )


def test_pools_are_ranges_or_cidrs() -> None:
    assert [str(ip) for ip in parse_address_pool("10.0.0.1-10.0.0.3")] == [
        "10.0.0.1",
        "10.0.0.2",
        "10.0.0.3",
    ]
    assert [str(ip) for ip in parse_address_pool("10.0.0.0/30")] == ["10.0.0.1", "10.0.0.2"]
    assert len(parse_address_pool("172.18.255.200-172.18.255.250")) == 51
    for bad in ("nonsense", "10.0.0.5-10.0.0.1", "10.0.0.1-::1", "10.0.0.0/8"):
        with pytest.raises(ConfigError):
            parse_address_pool(bad)


async def test_balancers_take_free_addresses_in_order_and_honour_load_balancer_ip() -> None:
    cloud = LocalCloud(pool="10.0.0.1-10.0.0.3")
    first = await cloud.ensure_load_balancer("k", svc("1"), [])
    assert first.ingress is not None
    assert first.ingress[0].ip == "10.0.0.1"
    again = await cloud.ensure_load_balancer("k", svc("1"), [])  # idempotent
    assert again == first
    wanted = await cloud.ensure_load_balancer("k", svc("2", "10.0.0.3"), [])
    assert wanted.ingress is not None
    assert wanted.ingress[0].ip == "10.0.0.3"
    with pytest.raises(ValueError, match="not a free address"):
        await cloud.ensure_load_balancer("k", svc("3", "10.0.0.1"), [])
    await cloud.ensure_load_balancer("k", svc("4"), [])
    with pytest.raises(ValueError, match="exhausted"):
        await cloud.ensure_load_balancer("k", svc("5"), [])
    assert (await cloud.get_load_balancer("k", svc("4")))[1] is True
    await cloud.ensure_load_balancer_deleted("k", svc("4"))
    assert (await cloud.get_load_balancer("k", svc("4"))) == (None, False)
    assert {b.ip for b in cloud.balancers.values()} == {"10.0.0.1", "10.0.0.3"}


async def test_instances_are_the_nodes_with_their_labels() -> None:
    cloud = LocalCloud(zone="z", region="r")
    labelled = Node(
        metadata=ObjectMeta(
            name="n1",
            labels={"node.kubernetes.io/instance-type": "big", "topology.kubernetes.io/zone": "b"},
        ),
        status=NodeStatus(addresses=[NodeAddress(type="InternalIP", address="10.1.1.1")]),
    )
    meta = await cloud.instance_metadata(labelled)
    assert (meta.provider_id, meta.instance_type, meta.zone, meta.region) == (
        "local://n1",
        "big",
        "b",
        "r",
    )
    assert [a.address for a in meta.node_addresses] == ["10.1.1.1"]
    assert await cloud.instance_exists(labelled)
    cloud.shut_down_instance("n1")
    assert await cloud.instance_shutdown(labelled)
    cloud.remove_instance("n1")
    assert not await cloud.instance_exists(labelled)
    with pytest.raises(InstanceNotFound):
        await cloud.instance_metadata(labelled)


def test_the_config_file_is_yaml_with_known_keys() -> None:
    cloud = new_local_cloud(b"loadBalancerIPPool: 192.168.5.0/29\nzone: a\nregion: b\n")
    assert (str(cloud.pool[0]), cloud.zone, cloud.region) == ("192.168.5.1", "a", "b")
    assert new_local_cloud(None).pool[0].compressed == "172.18.255.200"
    with pytest.raises(ConfigError, match="unknown local cloud setting"):
        new_local_cloud(b"pool: 1.2.3.4/32\n")
    with pytest.raises(ConfigError, match="mapping"):
        new_local_cloud(b"- a\n")
