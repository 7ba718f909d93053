"""The cloud controllers refuse a cloud that lacks what they need: ``add_to_manager`` raises
ControllerDisabled (``kcm`` logs it as "Skipping controller ...") and the constructor a
ValueError, before either touches the manager or the API."""

from __future__ import annotations

import re
from typing import Any

import pytest

from kcm.cloudprovider import FakeCloud
from kcm.controllers import ControllerDisabled
from kcm.controllers.cloudnode import CloudNodeController
from kcm.controllers.cloudnode import add_to_manager as add_cloud_node
from kcm.controllers.cloudnodelifecycle import CloudNodeLifecycleController
from kcm.controllers.cloudnodelifecycle import add_to_manager as add_cloud_node_lifecycle
from kcm.controllers.route import RouteController
from kcm.controllers.route import add_to_manager as add_route
from kcm.controllers.service import ServiceController
from kcm.controllers.service import add_to_manager as add_service
from kcm.errors import ConfigError

NO_INSTANCES = FakeCloud(name="bare", instances=False, instances_v2=False)


def exactly(message: str) -> str:
    return f"^{re.escape(message)}$"


ROUTES_ON = {
    "allocate_node_cidrs": True,
    "configure_cloud_routes": True,
    "cluster_cidr": "10.0.0.0/8",
}


@pytest.mark.parametrize("add", [add_cloud_node, add_cloud_node_lifecycle, add_route, add_service])
def test_without_a_cloud_every_cloud_controller_is_disabled(add: Any) -> None:
    options = ROUTES_ON if add is add_route else {}
    with pytest.raises(ControllerDisabled, match=exactly("no cloud provider (--cloud-provider)")):
        add(object(), cloud=None, **options)


@pytest.mark.parametrize("add", [add_cloud_node, add_cloud_node_lifecycle])
def test_the_node_controllers_need_instances(add: Any) -> None:
    with pytest.raises(
        ControllerDisabled, match=exactly("the cloud provider 'bare' has no instances")
    ):
        add(object(), cloud=NO_INSTANCES)
    for v1, v2 in ((True, False), (False, True)):  # either kind of instances will do
        ok = FakeCloud(instances=v1, instances_v2=v2)
        with pytest.raises(AttributeError):  # past the checks: the (fake) manager is used
            add(object(), cloud=ok)


def test_the_route_controller_needs_both_flags_then_routes_then_a_cluster_cidr() -> None:
    bare = FakeCloud(name="bare", routes=False)
    with pytest.raises(
        ControllerDisabled,
        match=exactly(
            "will not configure cloud provider routes for allocate-node-cidrs: false, "
            "configure-cloud-routes: true"
        ),
    ):
        add_route(object(), cloud=bare, **{**ROUTES_ON, "allocate_node_cidrs": False})
    with pytest.raises(
        ControllerDisabled,
        match=exactly(
            "configure-cloud-routes is set, but the cloud provider 'bare' does not support routes"
        ),
    ):
        add_route(object(), cloud=bare, **ROUTES_ON)
    with pytest.raises(ConfigError, match="--cluster-cidr"):
        add_route(object(), cloud=FakeCloud(), **{**ROUTES_ON, "cluster_cidr": "nope"})


def test_the_service_controller_needs_load_balancers() -> None:
    with pytest.raises(
        ControllerDisabled,
        match=exactly("the cloud provider 'bare' does not support external load balancers"),
    ):
        add_service(object(), cloud=FakeCloud(name="bare", load_balancer=False))


@pytest.mark.parametrize(
    ("build", "cloud", "options", "message"),
    [
        (CloudNodeController, NO_INSTANCES, {}, "the cloud provider 'bare' has no instances"),
        (
            CloudNodeLifecycleController,
            NO_INSTANCES,
            {},
            "the cloud provider 'bare' has no instances",
        ),
        (
            RouteController,
            FakeCloud(name="bare", routes=False),
            {"cluster_cidr": "10.0.0.0/8"},
            "the cloud provider 'bare' does not support routes",
        ),
        (
            ServiceController,
            FakeCloud(name="bare", load_balancer=False),
            {},
            "the cloud provider 'bare' does not support external load balancers",
        ),
    ],
)
def test_a_constructor_refuses_a_cloud_without_the_part_it_needs(
    build: Any, cloud: FakeCloud, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=exactly(message)):
        build(object(), object(), recorder=object(), cloud=cloud, **options)
