"""The simulated pod IP allocator: round-robin within a node's pod CIDR, no address twice."""

from __future__ import annotations

import pytest

from kcm.simulation import PodIPAllocator, PodIPsExhausted, pod_cidr_for


def test_pod_cidrs_of_simulated_nodes() -> None:
    assert pod_cidr_for(1) == "10.244.1.0/24"


def test_addresses_start_after_the_gateway_and_go_round() -> None:
    alloc = PodIPAllocator()
    assert alloc.allocate("n", ["10.244.1.0/24"], "a", []) == ["10.244.1.2"]
    assert alloc.allocate("n", ["10.244.1.0/24"], "b", []) == ["10.244.1.3"]
    alloc.release("a")
    # a freed address is not reused at once (host-local IPAM goes round)
    assert alloc.allocate("n", ["10.244.1.0/24"], "c", []) == ["10.244.1.4"]


def test_addresses_in_use_are_skipped_and_per_node() -> None:
    alloc = PodIPAllocator()
    used = ["10.244.1.2", "10.244.1.3"]
    assert alloc.allocate("n1", ["10.244.1.0/24"], "a", used) == ["10.244.1.4"]
    assert alloc.allocate("n2", ["10.244.2.0/24"], "b", []) == ["10.244.2.2"]


def test_one_address_per_cidr_for_dual_stack() -> None:
    alloc = PodIPAllocator()
    ips = alloc.allocate("n", ["10.244.1.0/24", "fd00:10:244:1::/64"], "a", [])
    assert ips == ["10.244.1.2", "fd00:10:244:1::2"]


def test_a_full_cidr_wraps_then_is_exhausted() -> None:
    alloc = PodIPAllocator()
    cidr = ["10.0.0.0/29"]  # .2 to .6: five pods
    got = [alloc.allocate("n", cidr, f"p{i}", [])[0] for i in range(5)]
    assert got == [f"10.0.0.{i}" for i in range(2, 7)]
    with pytest.raises(PodIPsExhausted):
        alloc.allocate("n", cidr, "p5", [])
    alloc.release("p1")
    assert alloc.allocate("n", cidr, "p6", []) == ["10.0.0.3"]  # wrapped round to the free one
