"""cloud-node's pure helpers: labels, label repairs, provided IP, addresses."""

from __future__ import annotations

import re

import pytest

from kcm.cloudprovider import FakeCloud, FakeInstance, InstanceMetadata
from kcm.controllers.cloudnode._metadata import (
    addresses_changed,
    cloud_labels,
    instance_metadata,
    label_repairs,
    provided_ip_found,
    with_hostname,
)
from kcm.models.core_v1 import Node, NodeAddress, NodeStatus
from kcm.models.meta_v1 import ObjectMeta

IP = NodeAddress(type="InternalIP", address="10.0.0.1")
HOST = NodeAddress(type="Hostname", address="n1")


def test_labels_are_set_ga_and_beta_only_for_what_the_cloud_told() -> None:
    assert cloud_labels(InstanceMetadata(instance_type="m1", zone="z1")) == {
        "node.kubernetes.io/instance-type": "m1",
        "beta.kubernetes.io/instance-type": "m1",
        "topology.kubernetes.io/zone": "z1",
        "failure-domain.beta.kubernetes.io/zone": "z1",
    }


def test_ga_labels_are_repaired_from_beta_ones() -> None:
    assert label_repairs(
        {
            "failure-domain.beta.kubernetes.io/zone": "z1",
            "topology.kubernetes.io/zone": "old",
            "beta.kubernetes.io/instance-type": "m1",
            "topology.kubernetes.io/region": "only-ga",
        }
    ) == {"topology.kubernetes.io/zone": "z1", "node.kubernetes.io/instance-type": "m1"}


def test_provided_ip() -> None:
    plain = Node(metadata=ObjectMeta(name="n1"))
    provided = Node(
        metadata=ObjectMeta(
            name="n1", annotations={"alpha.kubernetes.io/provided-node-ip": "10.0.0.1"}
        )
    )
    assert provided_ip_found(plain, [IP]) is None
    assert provided_ip_found(provided, [IP]) is True
    assert provided_ip_found(provided, []) is False


def test_the_nodes_hostname_is_kept_and_changes_detected() -> None:
    node = Node(metadata=ObjectMeta(name="n1"), status=NodeStatus(addresses=[HOST]))
    assert with_hostname(node, [IP]) == [IP, HOST]
    assert not addresses_changed([IP, HOST], [HOST, IP])
    assert addresses_changed([IP], [IP, HOST])
    assert addresses_changed([IP], [NodeAddress(type="InternalIP", address="10.0.0.2")])


def _instances_only() -> FakeCloud:
    cloud = FakeCloud(instances_v2=False, zones=False)
    cloud.instances_by_name["n1"] = FakeInstance(
        provider_id="fake://n1", instance_type="m1", addresses=(IP,)
    )
    return cloud


@pytest.mark.anyio
async def test_instances_are_asked_by_provider_id_else_by_node_name() -> None:
    cloud = _instances_only()
    n1 = Node(metadata=ObjectMeta(name="n1"))
    meta = await instance_metadata(cloud, "fake://n1", n1)
    assert (meta.instance_type, meta.node_addresses) == ("m1", (IP,))
    asked = [c.method for c in cloud.calls]
    assert asked == ["node_addresses_by_provider_id", "instance_type_by_provider_id"]
    meta = await instance_metadata(cloud, "fake://gone", n1)  # unknown ID: by name
    assert (meta.instance_type, meta.node_addresses) == ("m1", (IP,))
    assert [c.method for c in cloud.calls][len(asked) :] == [
        "node_addresses_by_provider_id",
        "node_addresses",
        "instance_type_by_provider_id",
        "instance_type",
    ]


@pytest.mark.anyio
async def test_when_both_lookups_fail_the_error_names_both() -> None:
    cloud = _instances_only()
    with pytest.raises(
        RuntimeError,
        match=re.escape(
            "error fetching node by provider ID: no instance with providerID 'fake://x', "
            "and error by node name: no instance for node 'n2'"
        ),
    ):
        await instance_metadata(cloud, "fake://x", Node(metadata=ObjectMeta(name="n2")))
    cloud.fail("instance_type_by_provider_id", RuntimeError("by id"))
    cloud.fail("instance_type", RuntimeError("by name"))
    with pytest.raises(
        RuntimeError,
        match=re.escape(
            "InstanceType: Error fetching by providerID: by id Error fetching by NodeName: by name"
        ),
    ):
        await instance_metadata(cloud, "fake://n1", Node(metadata=ObjectMeta(name="n1")))
