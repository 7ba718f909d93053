"""cloud-node's pure helpers: labels, label repairs, provided IP, addresses."""

from __future__ import annotations

from kcm.cloudprovider import InstanceMetadata
from kcm.controllers.cloudnode._metadata import (
    addresses_changed,
    cloud_labels,
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
