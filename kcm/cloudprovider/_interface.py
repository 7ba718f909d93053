"""The plugin interface a cloud provider implements (k8s.io/cloud-provider's ``cloud.go``).

Every method is async; a provider that lacks a part returns None from the accessor
(``load_balancer()``, ``instances()``...), where Go returns ``(impl, false)``. Sentinel errors
are the :class:`kcm.errors.CloudProviderError` subclasses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from kcm.models.core_v1 import LoadBalancerStatus, Node, NodeAddress, PersistentVolume, Service

__all__ = [
    "CloudProvider",
    "Clusters",
    "InstanceMetadata",
    "Instances",
    "InstancesV2",
    "LoadBalancer",
    "PVLabeler",
    "Route",
    "Routes",
    "Zone",
    "Zones",
]


@dataclass(frozen=True)
class Zone:
    """Where an instance runs (Go's ``cloudprovider.Zone``)."""

    failure_domain: str = ""
    region: str = ""


@dataclass(frozen=True)
class InstanceMetadata:
    """What :meth:`InstancesV2.instance_metadata` tells about a node's instance."""

    provider_id: str = ""
    instance_type: str = ""
    node_addresses: tuple[NodeAddress, ...] = ()
    zone: str = ""
    region: str = ""


@dataclass(frozen=True)
class Route:
    """A route in the cloud's table: traffic for ``destination_cidr`` goes to ``target_node``.

    ``blackhole`` marks a route whose target is gone (the route controller deletes those).
    """

    name: str = ""
    target_node: str = ""
    destination_cidr: str = ""
    blackhole: bool = False
    target_node_addresses: tuple[NodeAddress, ...] = field(default=())


class LoadBalancer(Protocol):
    """External load balancers for ``type: LoadBalancer`` Services."""

    async def get_load_balancer(
        self, cluster_name: str, service: Service
    ) -> tuple[LoadBalancerStatus | None, bool]:
        """The balancer's status and whether it exists."""
        ...

    def get_load_balancer_name(self, cluster_name: str, service: Service) -> str:
        """The cloud's name for the Service's balancer."""
        ...

    async def ensure_load_balancer(
        self, cluster_name: str, service: Service, nodes: Sequence[Node]
    ) -> LoadBalancerStatus:
        """Create or update the balancer so it sends the Service's ports to ``nodes``."""
        ...

    async def update_load_balancer(
        self, cluster_name: str, service: Service, nodes: Sequence[Node]
    ) -> None:
        """Point an existing balancer at ``nodes`` (the host sync)."""
        ...

    async def ensure_load_balancer_deleted(self, cluster_name: str, service: Service) -> None:
        """Delete the balancer; succeeds if it is already gone."""
        ...


class Instances(Protocol):
    """Instances by node name or providerID (the older interface; prefer :class:`InstancesV2`)."""

    async def node_addresses(self, name: str) -> Sequence[NodeAddress]: ...

    async def node_addresses_by_provider_id(self, provider_id: str) -> Sequence[NodeAddress]: ...

    async def instance_id(self, name: str) -> str:
        """The instance's ID (the providerID is ``<provider_name>://<instance_id>``).

        Raises:
            InstanceNotFound: no instance has that name.
        """
        ...

    async def instance_type(self, name: str) -> str: ...

    async def instance_type_by_provider_id(self, provider_id: str) -> str: ...

    async def add_ssh_key_to_all_instances(self, user: str, key_data: bytes) -> None: ...

    async def current_node_name(self, hostname: str) -> str: ...

    async def instance_exists_by_provider_id(self, provider_id: str) -> bool: ...

    async def instance_shutdown_by_provider_id(self, provider_id: str) -> bool: ...


class InstancesV2(Protocol):
    """Instances by Node object: what the cloud node controllers prefer."""

    async def instance_exists(self, node: Node) -> bool: ...

    async def instance_shutdown(self, node: Node) -> bool: ...

    async def instance_metadata(self, node: Node) -> InstanceMetadata: ...


class Zones(Protocol):
    """Failure domains and regions."""

    async def get_zone(self) -> Zone:
        """The zone of the machine this code runs on."""
        ...

    async def get_zone_by_provider_id(self, provider_id: str) -> Zone: ...

    async def get_zone_by_node_name(self, node_name: str) -> Zone: ...


class Routes(Protocol):
    """The cloud's route table for pod CIDRs."""

    async def list_routes(self, cluster_name: str) -> Sequence[Route]: ...

    async def create_route(self, cluster_name: str, name_hint: str, route: Route) -> None: ...

    async def delete_route(self, cluster_name: str, route: Route) -> None: ...


class Clusters(Protocol):
    """Clusters the cloud knows about."""

    async def list_clusters(self) -> Sequence[str]: ...

    async def master(self, cluster_name: str) -> str: ...


@runtime_checkable
class PVLabeler(Protocol):
    """Optional: the labels (zone, region) a PersistentVolume gets from its disk."""

    async def get_labels_for_volume(self, volume: PersistentVolume) -> Mapping[str, str]: ...


class CloudProvider(Protocol):
    """One cloud: the parts it supports (None for the others) and its identity.

    ``initialize`` is called once, before any controller runs, with the API client the
    controllers use and the shared informer factory (Go: ``Initialize(clientBuilder, stop)``
    plus the optional ``InformerUser.SetInformers``); a provider may start nothing there
    that outlives the process's task group.
    """

    @property
    def provider_name(self) -> str:
        """The name providerIDs start with (``<name>://...``)."""
        ...

    def has_cluster_id(self) -> bool:
        """Whether the provider has a cluster ID (the CCM refuses to start without one unless
        ``--allow-untagged-cloud``)."""
        ...

    def initialize(self, client: Any, factory: Any) -> None: ...

    def load_balancer(self) -> LoadBalancer | None: ...

    def instances(self) -> Instances | None: ...

    def instances_v2(self) -> InstancesV2 | None: ...

    def zones(self) -> Zones | None: ...

    def clusters(self) -> Clusters | None: ...

    def routes(self) -> Routes | None: ...
