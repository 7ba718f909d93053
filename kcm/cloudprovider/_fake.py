"""``FakeCloud``: an in-memory provider that records every call and fails on demand, for
the cloud controllers' tests and for provider authors (k8s.io/cloud-provider's ``fake``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, final

from kcm.errors import InstanceNotFound
from kcm.models.core_v1 import LoadBalancerIngress, LoadBalancerStatus, Node, NodeAddress, Service

from ._interface import (
    Clusters,
    InstanceMetadata,
    Instances,
    InstancesV2,
    LoadBalancer,
    Route,
    Routes,
    Zone,
    Zones,
)
from ._names import default_load_balancer_name

__all__ = ["FakeBalancer", "FakeCall", "FakeCloud", "FakeInstance"]


@dataclass(frozen=True)
class FakeCall:
    """One recorded call: the method's name and its arguments."""

    method: str
    args: tuple[Any, ...] = ()


@dataclass
class FakeInstance:
    """One instance of the fake cloud, keyed by node name in :attr:`FakeCloud.instances`."""

    provider_id: str = ""
    instance_type: str = ""
    zone: str = ""
    region: str = ""
    addresses: tuple[NodeAddress, ...] = ()
    shutdown: bool = False


@dataclass
class FakeBalancer:
    """One balancer of the fake cloud: its status and the node names it sends traffic to."""

    status: LoadBalancerStatus
    hosts: tuple[str, ...] = ()


def _node_name(node: Node) -> str:
    return node.metadata.name or ""


def _provider_id(node: Node) -> str:
    return (node.spec.provider_id if node.spec else None) or ""


@final
class FakeCloud:
    """A cloud in memory: every part supported unless switched off, every call recorded.

    Args:
        name: the provider name (providerIDs are ``<name>://<node>`` by default).
        ingress_ip: the address :meth:`ensure_load_balancer` gives every balancer.
        load_balancer, instances, instances_v2, zones, routes, clusters: whether the part is
            supported (its accessor returns None otherwise).

    Attributes:
        calls: every call so far, in order (:class:`FakeCall`).
        instances_by_name: the instances (:class:`FakeInstance`) by node name; a node whose
            name is missing has no instance (``InstanceNotFound`` / ``instance_exists`` False).
        balancers: the balancers by name (:func:`default_load_balancer_name`).
        route_table: the routes by name.
        errors: method name → exception raised by the next calls (:meth:`fail`).
    """

    def __init__(
        self,
        *,
        name: str = "fake",
        ingress_ip: str = "1.2.3.4",
        load_balancer: bool = True,
        instances: bool = True,
        instances_v2: bool = True,
        zones: bool = True,
        routes: bool = True,
        clusters: bool = True,
    ) -> None:
        self._name = name
        self.ingress_ip = ingress_ip
        self._parts = {
            "load_balancer": load_balancer,
            "instances": instances,
            "instances_v2": instances_v2,
            "zones": zones,
            "routes": routes,
            "clusters": clusters,
        }
        self.calls: list[FakeCall] = []
        self.instances_by_name: dict[str, FakeInstance] = {}
        self.balancers: dict[str, FakeBalancer] = {}
        self.route_table: dict[str, Route] = {}
        self.errors: dict[str, tuple[BaseException, int | None]] = {}
        self.initialized = False

    def __repr__(self) -> str:
        return f"<FakeCloud {self._name} calls={len(self.calls)}>"

    # -- test controls -------------------------------------------------------------------

    def fail(self, method: str, error: BaseException, *, times: int | None = None) -> None:
        """Make ``method`` raise ``error`` on its next ``times`` calls (None: until
        :meth:`heal`)."""
        self.errors[method] = (error, times)

    def heal(self, method: str | None = None) -> None:
        """Stop failing ``method`` (every method without one)."""
        if method is None:
            self.errors.clear()
        else:
            self.errors.pop(method, None)

    def add_instance(self, node_name: str, **fields: Any) -> FakeInstance:
        """Add (or replace) the instance of ``node_name``; its providerID defaults to
        ``<name>://<node_name>``."""
        fields.setdefault("provider_id", f"{self._name}://{node_name}")
        instance = FakeInstance(**fields)
        self.instances_by_name[node_name] = instance
        return instance

    def called(self, method: str) -> list[FakeCall]:
        """The recorded calls of ``method``."""
        return [c for c in self.calls if c.method == method]

    def _record(self, method: str, *args: Any) -> None:
        self.calls.append(FakeCall(method, args))
        planned = self.errors.get(method)
        if planned is None:
            return
        error, times = planned
        if times is not None:
            if times <= 1:
                del self.errors[method]
            else:
                self.errors[method] = (error, times - 1)
        raise error

    # -- CloudProvider -------------------------------------------------------------------

    @property
    def provider_name(self) -> str:
        return self._name

    def has_cluster_id(self) -> bool:
        return True

    def initialize(self, client: Any, factory: Any) -> None:
        self.initialized = True

    def load_balancer(self) -> LoadBalancer | None:
        return self if self._parts["load_balancer"] else None

    def instances(self) -> Instances | None:
        return self if self._parts["instances"] else None

    def instances_v2(self) -> InstancesV2 | None:
        return self if self._parts["instances_v2"] else None

    def zones(self) -> Zones | None:
        return self if self._parts["zones"] else None

    def clusters(self) -> Clusters | None:
        return self if self._parts["clusters"] else None

    def routes(self) -> Routes | None:
        return self if self._parts["routes"] else None

    # -- LoadBalancer --------------------------------------------------------------------

    async def get_load_balancer(
        self, cluster_name: str, service: Service
    ) -> tuple[LoadBalancerStatus | None, bool]:
        self._record("get_load_balancer", cluster_name, service.metadata.name)
        found = self.balancers.get(default_load_balancer_name(service))
        return (found.status, True) if found is not None else (None, False)

    def get_load_balancer_name(self, cluster_name: str, service: Service) -> str:
        return default_load_balancer_name(service)

    async def ensure_load_balancer(
        self, cluster_name: str, service: Service, nodes: Sequence[Node]
    ) -> LoadBalancerStatus:
        hosts = tuple(sorted(_node_name(n) for n in nodes))
        self._record("ensure_load_balancer", cluster_name, service.metadata.name, hosts)
        status = LoadBalancerStatus(ingress=[LoadBalancerIngress(ip=self.ingress_ip)])
        self.balancers[default_load_balancer_name(service)] = FakeBalancer(status, hosts)
        return status

    async def update_load_balancer(
        self, cluster_name: str, service: Service, nodes: Sequence[Node]
    ) -> None:
        hosts = tuple(sorted(_node_name(n) for n in nodes))
        self._record("update_load_balancer", cluster_name, service.metadata.name, hosts)
        found = self.balancers.get(default_load_balancer_name(service))
        if found is not None:
            found.hosts = hosts

    async def ensure_load_balancer_deleted(self, cluster_name: str, service: Service) -> None:
        self._record("ensure_load_balancer_deleted", cluster_name, service.metadata.name)
        self.balancers.pop(default_load_balancer_name(service), None)

    # -- Instances / InstancesV2 ---------------------------------------------------------

    def _by_provider_id(self, provider_id: str) -> FakeInstance:
        for instance in self.instances_by_name.values():
            if instance.provider_id == provider_id:
                return instance
        raise InstanceNotFound(f"no instance with providerID {provider_id!r}")

    def _by_name(self, name: str) -> FakeInstance:
        found = self.instances_by_name.get(name)
        if found is None:
            raise InstanceNotFound(f"no instance for node {name!r}")
        return found

    def _of(self, node: Node) -> FakeInstance | None:
        pid = _provider_id(node)
        try:
            return self._by_provider_id(pid) if pid else self._by_name(_node_name(node))
        except InstanceNotFound:
            return None

    async def node_addresses(self, name: str) -> Sequence[NodeAddress]:
        self._record("node_addresses", name)
        return self._by_name(name).addresses

    async def node_addresses_by_provider_id(self, provider_id: str) -> Sequence[NodeAddress]:
        self._record("node_addresses_by_provider_id", provider_id)
        return self._by_provider_id(provider_id).addresses

    async def instance_id(self, name: str) -> str:
        self._record("instance_id", name)
        return self._by_name(name).provider_id.split("://", 1)[-1]

    async def instance_type(self, name: str) -> str:
        self._record("instance_type", name)
        return self._by_name(name).instance_type

    async def instance_type_by_provider_id(self, provider_id: str) -> str:
        self._record("instance_type_by_provider_id", provider_id)
        return self._by_provider_id(provider_id).instance_type

    async def add_ssh_key_to_all_instances(self, user: str, key_data: bytes) -> None:
        self._record("add_ssh_key_to_all_instances", user)

    async def current_node_name(self, hostname: str) -> str:
        self._record("current_node_name", hostname)
        return hostname

    async def instance_exists_by_provider_id(self, provider_id: str) -> bool:
        self._record("instance_exists_by_provider_id", provider_id)
        try:
            self._by_provider_id(provider_id)
        except InstanceNotFound:
            return False
        return True

    async def instance_shutdown_by_provider_id(self, provider_id: str) -> bool:
        self._record("instance_shutdown_by_provider_id", provider_id)
        return self._by_provider_id(provider_id).shutdown

    async def instance_exists(self, node: Node) -> bool:
        self._record("instance_exists", _node_name(node))
        return self._of(node) is not None

    async def instance_shutdown(self, node: Node) -> bool:
        self._record("instance_shutdown", _node_name(node))
        found = self._of(node)
        if found is None:
            raise InstanceNotFound(f"no instance for node {_node_name(node)!r}")
        return found.shutdown

    async def instance_metadata(self, node: Node) -> InstanceMetadata:
        self._record("instance_metadata", _node_name(node))
        found = self._of(node)
        if found is None:
            raise InstanceNotFound(f"no instance for node {_node_name(node)!r}")
        return InstanceMetadata(
            provider_id=found.provider_id,
            instance_type=found.instance_type,
            node_addresses=found.addresses,
            zone=found.zone,
            region=found.region,
        )

    # -- Zones ---------------------------------------------------------------------------

    async def get_zone(self) -> Zone:
        self._record("get_zone")
        return Zone()

    async def get_zone_by_provider_id(self, provider_id: str) -> Zone:
        self._record("get_zone_by_provider_id", provider_id)
        found = self._by_provider_id(provider_id)
        return Zone(found.zone, found.region)

    async def get_zone_by_node_name(self, node_name: str) -> Zone:
        self._record("get_zone_by_node_name", node_name)
        found = self._by_name(node_name)
        return Zone(found.zone, found.region)

    # -- Routes --------------------------------------------------------------------------

    async def list_routes(self, cluster_name: str) -> Sequence[Route]:
        self._record("list_routes", cluster_name)
        return list(self.route_table.values())

    async def create_route(self, cluster_name: str, name_hint: str, route: Route) -> None:
        self._record("create_route", cluster_name, name_hint, route)
        name = f"{cluster_name}-{name_hint}"
        self.route_table[name] = Route(
            name=name, target_node=route.target_node, destination_cidr=route.destination_cidr
        )

    async def delete_route(self, cluster_name: str, route: Route) -> None:
        self._record("delete_route", cluster_name, route)
        self.route_table.pop(route.name, None)

    # -- Clusters ------------------------------------------------------------------------

    async def list_clusters(self) -> Sequence[str]:
        self._record("list_clusters")
        return ["kubernetes"]

    async def master(self, cluster_name: str) -> str:
        self._record("master", cluster_name)
        return "127.0.0.1"
