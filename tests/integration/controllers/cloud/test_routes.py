"""The route controller on a FakeCloud against the embedded API server (§18: scenario 4)."""

from __future__ import annotations

from typing import Any

import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.cloudprovider import FakeCloud, Route
from kcm.controllers.route import RouteController
from kcm.informers import SharedInformerFactory
from kcm.models.core_v1 import Node
from kcm.testing import FakeClock, FakeRecorder, eventually

from .cloud_harness import Env, create_node, node, running

pytestmark = pytest.mark.anyio


def make(cloud: FakeCloud, clock: FakeClock, recorder: FakeRecorder) -> Any:
    def build(client: ApiClient, factory: SharedInformerFactory) -> RouteController:
        return RouteController(
            client,
            factory,
            recorder=recorder,
            cloud=cloud,
            clock=clock,
            cluster_cidr="10.244.0.0/16",
        )

    return build


async def next_pass(env: Env) -> None:
    [controller] = env.built
    before = controller.passes
    await env.clock.advance(10)

    async def done() -> bool:
        return bool(controller.passes > before)

    await eventually(done)


def network(n: Node) -> tuple[str | None, str | None, str | None] | None:
    for c in (n.status.conditions if n.status else None) or ():
        if c.type == "NetworkUnavailable":
            return (c.status, c.reason, c.message)
    return None


async def test_a_missing_route_is_created_and_the_node_marked_reachable(
    api_server: ApiServer,
) -> None:
    cloud, clock, recorder = FakeCloud(), FakeClock(), FakeRecorder()
    async with running(api_server, clock, make(cloud, clock, recorder)) as env:
        created = await create_node(env.client, node("n1", pod_cidrs=["10.244.1.0/24"]))
        await create_node(env.client, node("no-cidr"))
        await next_pass(env)
        [call] = cloud.called("create_route")
        assert call.args == (
            "kubernetes",
            created.metadata.uid,
            Route(target_node="n1", destination_cidr="10.244.1.0/24"),
        )
        nodes = env.client.api(Node)
        assert network(await nodes.get("n1")) == (
            "False",
            "RouteCreated",
            "RouteController created a route",
        )
        assert network(await nodes.get("no-cidr")) == (
            "True",
            "NoRouteCreated",
            "RouteController failed to create a route",
        )
        await next_pass(env)  # nothing new: no second create
        assert len(cloud.called("create_route")) == 1


async def test_stale_and_blackholed_routes_inside_the_cluster_cidr_are_deleted(
    api_server: ApiServer,
) -> None:
    cloud, clock, recorder = FakeCloud(), FakeClock(), FakeRecorder()
    cloud.route_table = {
        "stale": Route("stale", "gone-node", "10.244.9.0/24"),
        "hole": Route("hole", "n1", "10.244.1.0/24", blackhole=True),
        "outside": Route("outside", "elsewhere", "192.168.0.0/24"),
    }
    async with running(api_server, clock, make(cloud, clock, recorder)) as env:
        await create_node(env.client, node("n1", pod_cidrs=["10.244.1.0/24"]))
        await next_pass(env)
        deleted = {c.args[1].name for c in cloud.called("delete_route")}
        assert deleted == {"stale", "hole"}
        assert "outside" in cloud.route_table


async def test_a_failed_create_is_an_event_and_the_network_stays_unavailable(
    api_server: ApiServer,
) -> None:
    cloud, clock, recorder = FakeCloud(), FakeClock(), FakeRecorder()
    cloud.fail("create_route", RuntimeError("limit reached"), times=1)
    async with running(api_server, clock, make(cloud, clock, recorder)) as env:
        created = await create_node(env.client, node("n1", pod_cidrs=["10.244.1.0/24"]))
        await next_pass(env)
        assert recorder.events == [
            f"Warning FailedToCreateRoute Could not create route {created.metadata.uid} "
            "10.244.1.0/24 for node n1: limit reached"
        ]
        assert network(await env.client.api(Node).get("n1")) == (
            "True",
            "NoRouteCreated",
            "RouteController failed to create a route",
        )
        await next_pass(env)
        assert network(await env.client.api(Node).get("n1")) == (
            "False",
            "RouteCreated",
            "RouteController created a route",
        )
