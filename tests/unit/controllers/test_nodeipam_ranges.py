"""Node IPAM: subnet arithmetic and the flag checks (kube's cidrset and setNodeCIDRMaskSizes)."""

from __future__ import annotations

import ipaddress

import pytest

from kcm.controllers.nodeipam import CIDRRangeExhausted, CIDRSet, IPAMSettings
from kcm.errors import ConfigError

net = ipaddress.ip_network


def test_subnets_are_handed_out_round_robin_and_never_twice() -> None:
    cidrs = CIDRSet(net("10.244.0.0/22"), 24)
    got = [str(cidrs.allocate_next()) for _ in range(4)]
    assert got == ["10.244.0.0/24", "10.244.1.0/24", "10.244.2.0/24", "10.244.3.0/24"]
    with pytest.raises(CIDRRangeExhausted, match="no remaining CIDRs"):
        cidrs.allocate_next()
    cidrs.release(net("10.244.1.0/24"))
    assert str(cidrs.allocate_next()) == "10.244.1.0/24"


def test_round_robin_continues_after_the_last_one_handed_out() -> None:
    cidrs = CIDRSet(net("10.0.0.0/16"), 24)
    cidrs.allocate_next()
    second = cidrs.allocate_next()
    cidrs.release(second)
    assert str(cidrs.allocate_next()) == "10.0.2.0/24"  # not the freed one at once


def test_occupy_marks_every_overlapping_subnet() -> None:
    cidrs = CIDRSet(net("10.0.0.0/16"), 24)
    cidrs.occupy(net("10.0.0.0/23"))  # a service range spanning two node subnets
    assert cidrs.used == 2
    assert str(cidrs.allocate_next()) == "10.0.2.0/24"
    with pytest.raises(ValueError, match="out the range"):
        cidrs.occupy(net("192.168.0.0/24"))


def test_ipv6_and_mask_limits() -> None:
    cidrs = CIDRSet(net("fd00:10:244::/56"), 64)
    assert str(cidrs.allocate_next()) == "fd00:10:244::/64"
    with pytest.raises(ValueError, match="between"):
        CIDRSet(net("10.0.0.0/16"), 8)
    with pytest.raises(ValueError, match="at most 16 bits"):
        CIDRSet(net("10.0.0.0/8"), 25)


def test_settings_follow_kube_controller_manager() -> None:
    single = IPAMSettings.from_flags(cluster_cidr="10.244.0.0/16")
    assert single.node_masks == (24,)
    v6 = IPAMSettings.from_flags(cluster_cidr="fd00::/48", node_cidr_mask_size_ipv6=56)
    assert v6.node_masks == (56,)
    dual = IPAMSettings.from_flags(
        cluster_cidr="10.244.0.0/16,fd00::/48", node_cidr_mask_size_ipv4=26
    )
    assert dual.node_masks == (26, 64)
    assert IPAMSettings.from_flags(
        cluster_cidr="10.0.0.0/8", node_cidr_mask_size=16
    ).node_masks == (16,)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ({"cluster_cidr": ""}, "Must specify --cluster-cidr"),
        ({"cluster_cidr": "10.0.0.0/33"}, "not a CIDR"),
        ({"cluster_cidr": "10.0.0.0/16,10.1.0.0/16"}, "one IPv4 and one IPv6"),
        (
            {"cluster_cidr": "10.0.0.0/16,fd00::/48", "node_cidr_mask_size": 24},
            "not allowed with dual-stack",
        ),
        (
            {
                "cluster_cidr": "10.0.0.0/16",
                "node_cidr_mask_size": 24,
                "node_cidr_mask_size_ipv4": 25,
            },
            "not allowed if --node-cidr-mask-size is set",
        ),
        ({"cluster_cidr": "10.0.0.0/25"}, "Invalid --cluster-cidr"),
    ],
)
def test_bad_flags_are_config_errors(flags: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        IPAMSettings.from_flags(**flags)  # type: ignore[arg-type]


def test_the_flags_reach_nodeipam_and_the_simulation_leaves_cidrs_to_it() -> None:
    from kcm.cli._flags import parse_run_args

    default = parse_run_args([])
    assert default.controller_options["nodeipam"]["allocate_node_cidrs"] is False
    assert default.simulation.assign_pod_cidrs is True
    on = parse_run_args(["--allocate-node-cidrs", "--cluster-cidr=10.0.0.0/16"])
    assert on.controller_options["nodeipam"] == {
        "allocate_node_cidrs": True,
        "cluster_cidr": "10.0.0.0/16",
        "service_cluster_ip_range": "",
        "node_cidr_mask_size": 0,
        "node_cidr_mask_size_ipv4": 0,
        "node_cidr_mask_size_ipv6": 0,
    }
    assert on.simulation.assign_pod_cidrs is False
    off = parse_run_args(["--allocate-node-cidrs=true", "--controllers=*,-nodeipam"])
    assert off.simulation.assign_pod_cidrs is True


def test_without_allocate_node_cidrs_the_controller_is_skipped() -> None:
    from kcm.controllers import ControllerDisabled
    from kcm.controllers.nodeipam import add_to_manager

    with pytest.raises(ControllerDisabled, match="--allocate-node-cidrs is false"):
        add_to_manager(object())  # type: ignore[arg-type]
