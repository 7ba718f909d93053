"""route: cloud routes for the nodes' pod CIDRs (the controller managers' ``route``,
k8s.io/cloud-provider's ``controllers/route``).

Every ``route_reconciliation_period`` (10 s) the cloud's routes are listed and compared with
the nodes' ``spec.podCIDRs``:

1. a missing route ``{target node, pod CIDR}`` is created (name hint: the node's UID; at
   most 200 creates at once); a failure is a Warning ``FailedToCreateRoute`` on the Node;
2. a route inside the cluster CIDRs that is blackholed or matches no node's CIDR is deleted;
3. each node's ``NetworkUnavailable`` condition is set: False/``RouteCreated`` when all its
   routes exist, True/``NoRouteCreated`` otherwise (a node without pod CIDRs included);
   an unchanged status is not written again.
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Sequence
from typing import Any, final

import anyio
from anyio.abc import TaskStatus
from prometheus_client import CollectorRegistry

from kcm.client import ApiClient, PatchType
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.cloudprovider import CloudProvider, Route, Routes
from kcm.controllerkit import cloud_support_refusal, run_every
from kcm.informers import SharedInformerFactory
from kcm.models import format_time
from kcm.models.core_v1 import Node, ObjectReference
from kcm.record import EventRecorder

__all__ = [
    "DEFAULT_ROUTE_RECONCILIATION_PERIOD",
    "MAX_CONCURRENT_ROUTE_CREATIONS",
    "RouteController",
    "parse_cluster_cidrs",
]

logger = logging.getLogger(__name__)

DEFAULT_ROUTE_RECONCILIATION_PERIOD = 10.0
"""``--route-reconciliation-period``' default, in seconds."""
MAX_CONCURRENT_ROUTE_CREATIONS = 200
"""The most route creates and deletes in flight at once."""

_Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_cluster_cidrs(text: str) -> list[_Network]:
    """``--cluster-cidr``: one CIDR or a comma-separated dual-stack pair.

    Raises:
        ValueError: empty, or an entry is not a CIDR.
    """
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise ValueError("--cluster-cidr is required by the route controller")
    try:
        return [ipaddress.ip_network(p, strict=False) for p in parts]
    except ValueError as exc:
        raise ValueError(f"--cluster-cidr {text!r}: {exc}") from exc


def _pod_cidrs(node: Node) -> Sequence[str]:
    return (node.spec.pod_cidrs if node.spec else None) or ()


def _network_unavailable(node: Node) -> str | None:
    for condition in (node.status.conditions if node.status else None) or ():
        if condition.type == "NetworkUnavailable":
            return condition.status
    return None


@final
class RouteController:
    """Keeps the cloud's routes in line with the nodes' pod CIDRs (see the module doc).

    Args:
        client: the API client (NetworkUnavailable condition patches).
        factory: where the Node informer comes from.
        recorder: the ``route-controller`` event sink.
        cloud: the provider; it must support routes.
        clock: the clock the reconciliation period runs on.
        workers: accepted for the common signature (one pass at a time).
        registry: accepted for the common signature (no metrics of its own).
        cluster_name: ``--cluster-name`` (routes are listed, created and deleted under it).
        cluster_cidr: ``--cluster-cidr``: only routes inside it are ever deleted.
        route_reconciliation_period: seconds between passes.

    Raises:
        ValueError: the provider has no routes, or ``cluster_cidr`` is not a CIDR.

    Attributes:
        passes: completed passes (tests wait on it).
    """

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        recorder: EventRecorder,
        cloud: CloudProvider,
        cluster_cidr: str,
        clock: Clock = SYSTEM_CLOCK,
        workers: int = 1,
        registry: CollectorRegistry | None = None,
        cluster_name: str = "kubernetes",
        route_reconciliation_period: float = DEFAULT_ROUTE_RECONCILIATION_PERIOD,
    ) -> None:
        routes = cloud.routes()
        if routes is None:
            raise ValueError(cloud_support_refusal(cloud, "routes"))
        self._routes: Routes = routes
        self._cluster_cidrs = parse_cluster_cidrs(cluster_cidr)
        self._client = client
        self._recorder = recorder
        self._clock = clock
        self.cluster_name = cluster_name
        self._period = route_reconciliation_period
        self._informer = factory.informer_for(Node)
        self._nodes = self._informer.lister()
        self.passes = 0

    def __repr__(self) -> str:
        return f"<RouteController cluster={self.cluster_name} passes={self.passes}>"

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Wait for the node cache, then reconcile every period (the first at once)."""
        await self._informer.wait_for_sync()
        task_status.started()
        await run_every(
            self._clock,
            self._period,
            self.reconcile,
            sliding=False,
            on_failure=lambda exc: logger.error("route: couldn't reconcile node routes: %s", exc),
        )

    def _responsible_for(self, route: Route) -> bool:
        try:
            network = ipaddress.ip_network(route.destination_cidr, strict=False)
        except ValueError:
            logger.error("route: ignoring route %s, unparsable CIDR", route.name)
            return False
        return any(
            network.version == c.version
            and (network.network_address in c or network.broadcast_address in c)
            for c in self._cluster_cidrs
        )

    async def reconcile(self) -> None:
        """One pass (see the module doc)."""
        routes = list(await self._routes.list_routes(self.cluster_name))
        nodes = self._nodes.list()
        existing = {(r.target_node, r.destination_cidr) for r in routes if r.target_node}
        created: dict[str, dict[str, bool]] = {}
        limiter = anyio.CapacityLimiter(MAX_CONCURRENT_ROUTE_CREATIONS)

        async def create(node: Node, cidr: str) -> None:
            name = node.metadata.name or ""
            hint = node.metadata.uid or ""
            async with limiter:
                try:
                    await self._routes.create_route(
                        self.cluster_name, hint, Route(target_node=name, destination_cidr=cidr)
                    )
                except Exception as exc:
                    message = f"Could not create route {hint} {cidr} for node {name}: {exc}"
                    ref = ObjectReference(kind="Node", name=name, uid=name)
                    self._recorder.event(ref, "Warning", "FailedToCreateRoute", message)
                    logger.error("route: %s", message)
                    return
            created[name][cidr] = True
            logger.info("route: created route for node %s %s with hint %s", name, cidr, hint)

        async def delete(route: Route) -> None:
            async with limiter:
                try:
                    await self._routes.delete_route(self.cluster_name, route)
                except Exception as exc:
                    logger.error(
                        "route: could not delete route %s %s: %s",
                        route.name,
                        route.destination_cidr,
                        exc,
                    )
                    return
            logger.info("route: deleted route %s %s", route.name, route.destination_cidr)

        async with anyio.create_task_group() as tg:
            for node in nodes:
                name = node.metadata.name or ""
                if not _pod_cidrs(node):
                    continue
                created[name] = {}
                for cidr in _pod_cidrs(node):
                    created[name][cidr] = (name, cidr) in existing
                    if not created[name][cidr]:
                        tg.start_soon(create, node, cidr)
        async with anyio.create_task_group() as tg:
            for route in routes:
                if not self._responsible_for(route):
                    continue
                wanted = route.destination_cidr in created.get(route.target_node, {})
                if route.blackhole or not wanted:
                    tg.start_soon(delete, route)
        async with anyio.create_task_group() as tg:
            for node in nodes:
                statuses = created.get(node.metadata.name or "", {})
                tg.start_soon(self._set_condition, node, bool(statuses) and all(statuses.values()))
        self.passes += 1

    async def _set_condition(self, node: Node, routes_created: bool) -> None:
        """NetworkUnavailable False/RouteCreated or True/NoRouteCreated, unless already so."""
        current = _network_unavailable(node)
        wanted = "False" if routes_created else "True"
        if current == wanted:
            return
        now = format_time(self._clock.now())
        condition: dict[str, Any] = {
            "type": "NetworkUnavailable",
            "status": wanted,
            "reason": "RouteCreated" if routes_created else "NoRouteCreated",
            "message": "RouteController created a route"
            if routes_created
            else "RouteController failed to create a route",
            "lastTransitionTime": now,
            "lastHeartbeatTime": now,
        }
        try:
            await self._client.api(Node).patch_status(
                node.metadata.name or "",
                {"status": {"conditions": [condition]}},
                patch_type=PatchType.STRATEGIC,
            )
        except Exception as exc:
            logger.error("route: error updating node %s: %s", node.metadata.name, exc)
