"""cloud_support_refusal: why a cloud controller cannot run on a provider, or None."""

from __future__ import annotations

import pytest

from kcm.cloudprovider import FakeCloud
from kcm.controllerkit import CloudPart, cloud_support_refusal


@pytest.mark.parametrize("needs", ["instances", "routes", "load balancers"])
def test_no_provider_is_refused_whatever_the_need(needs: CloudPart) -> None:
    assert cloud_support_refusal(None, needs) == "no cloud provider (--cloud-provider)"


@pytest.mark.parametrize("needs", ["instances", "routes", "load balancers"])
def test_a_provider_with_every_part_is_accepted(needs: CloudPart) -> None:
    assert cloud_support_refusal(FakeCloud(), needs) is None


def test_instances_are_either_kind() -> None:
    assert cloud_support_refusal(FakeCloud(instances=False), "instances") is None
    assert cloud_support_refusal(FakeCloud(instances_v2=False), "instances") is None
    bare = FakeCloud(name="bare", instances=False, instances_v2=False)
    assert cloud_support_refusal(bare, "instances") == "the cloud provider 'bare' has no instances"
    assert cloud_support_refusal(bare, "routes") is None


def test_routes_and_load_balancers_are_each_their_own_part() -> None:
    no_routes = FakeCloud(name="bare", routes=False)
    assert (
        cloud_support_refusal(no_routes, "routes")
        == "the cloud provider 'bare' does not support routes"
    )
    assert cloud_support_refusal(no_routes, "load balancers") is None
    no_balancers = FakeCloud(name="bare", load_balancer=False)
    assert (
        cloud_support_refusal(no_balancers, "load balancers")
        == "the cloud provider 'bare' does not support external load balancers"
    )
    assert cloud_support_refusal(no_balancers, "instances") is None
