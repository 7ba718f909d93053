"""``local``: the cloud kcm ships for its embedded cluster (like MetalLB on a laptop).

* Instances are the cluster's nodes (the simulated ones included): providerID
  ``local://<node>``, type, zone and region from the node's own labels, else ``kcm-simulated``
  and the configured zone and region. :meth:`LocalCloud.remove_instance` and
  :meth:`LocalCloud.shut_down_instance` play a machine going away.
* Load balancers get an address from a pool (default ``172.18.255.200-172.18.255.250``); a
  Service's ``spec.loadBalancerIP`` is honoured when it is in the pool and free. The table is
  :attr:`LocalCloud.balancers`. No traffic is forwarded.
* Routes are an in-memory table (:attr:`LocalCloud.route_table`).

``--cloud-config`` is YAML: ``loadBalancerIPPool`` (``first-last`` or a CIDR), ``zone``,
``region``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, final

import yaml

from kcm.errors import ConfigError, InstanceNotFound
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
from ._names import (
    LABEL_INSTANCE_TYPE,
    LABEL_TOPOLOGY_REGION,
    LABEL_TOPOLOGY_ZONE,
    default_load_balancer_name,
)

__all__ = [
    "DEFAULT_LOAD_BALANCER_POOL",
    "LocalBalancer",
    "LocalCloud",
    "new_local_cloud",
    "parse_address_pool",
]

DEFAULT_LOAD_BALANCER_POOL = "172.18.255.200-172.18.255.250"
"""The addresses local balancers get by default (a MetalLB-on-kind-like range)."""

_IP = ipaddress.IPv4Address | ipaddress.IPv6Address


def parse_address_pool(text: str) -> list[_IP]:
    """Every address of ``first-last`` or a CIDR (network and broadcast excluded for IPv4
    networks larger than /31).

    Raises:
        ConfigError: neither form, or an empty range.
    """
    value = text.strip()
    try:
        if "-" in value:
            first_text, last_text = (part.strip() for part in value.split("-", 1))
            first, last = ipaddress.ip_address(first_text), ipaddress.ip_address(last_text)
            if first.version != last.version or int(last) < int(first):
                raise ValueError("the last address must follow the first, same family")
            span = int(last) - int(first) + 1
            if span > 65536:
                raise ValueError("more than 65536 addresses")
            return [ipaddress.ip_address(int(first) + i) for i in range(span)]
        network = ipaddress.ip_network(value, strict=False)
        if network.num_addresses > 65536:
            raise ValueError("more than 65536 addresses")
        return list(network.hosts()) or [network.network_address]
    except ValueError as exc:
        raise ConfigError(
            f"load balancer pool {text!r} is not 'first-last' or a CIDR: {exc}"
        ) from exc


@dataclass
class LocalBalancer:
    """One local balancer: the Service it serves, its address and its hosts."""

    service: str
    ip: str
    hosts: tuple[str, ...] = ()


def _labels(node: Node) -> dict[str, str]:
    return dict(node.metadata.labels or {})


@final
class LocalCloud:
    """The ``local`` provider (see the module doc).

    Args:
        pool: the load-balancer address pool (``first-last`` or a CIDR).
        zone, region: what nodes without zone/region labels are in.

    Raises:
        ConfigError: a bad pool.
    """

    def __init__(
        self,
        *,
        pool: str = DEFAULT_LOAD_BALANCER_POOL,
        zone: str = "local-a",
        region: str = "local",
    ) -> None:
        self.pool = parse_address_pool(pool)
        self.zone = zone
        self.region = region
        self.balancers: dict[str, LocalBalancer] = {}
        self.route_table: dict[str, Route] = {}
        self.gone: set[str] = set()
        self.shut_down: set[str] = set()

    def __repr__(self) -> str:
        return f"<LocalCloud balancers={len(self.balancers)} routes={len(self.route_table)}>"

    # -- playing machines ----------------------------------------------------------------

    def remove_instance(self, node_name: str) -> None:
        """The node's machine is gone (cloud-node-lifecycle deletes a NotReady node)."""
        self.gone.add(node_name)

    def shut_down_instance(self, node_name: str, shut_down: bool = True) -> None:
        """The node's machine is (or is no longer) shut down."""
        (self.shut_down.add if shut_down else self.shut_down.discard)(node_name)

    # -- CloudProvider -------------------------------------------------------------------

    @property
    def provider_name(self) -> str:
        return "local"

    def has_cluster_id(self) -> bool:
        return True

    def initialize(self, client: Any, factory: Any) -> None:
        return None

    def load_balancer(self) -> LoadBalancer | None:
        return self

    def instances(self) -> Instances | None:
        return None

    def instances_v2(self) -> InstancesV2 | None:
        return self

    def zones(self) -> Zones | None:
        return self

    def clusters(self) -> Clusters | None:
        return self

    def routes(self) -> Routes | None:
        return self

    # -- LoadBalancer --------------------------------------------------------------------

    def _status(self, balancer: LocalBalancer) -> LoadBalancerStatus:
        return LoadBalancerStatus(ingress=[LoadBalancerIngress(ip=balancer.ip)])

    async def get_load_balancer(
        self, cluster_name: str, service: Service
    ) -> tuple[LoadBalancerStatus | None, bool]:
        found = self.balancers.get(default_load_balancer_name(service))
        return (self._status(found), True) if found is not None else (None, False)

    def get_load_balancer_name(self, cluster_name: str, service: Service) -> str:
        return default_load_balancer_name(service)

    def _free(self) -> Iterator[str]:
        taken = {b.ip for b in self.balancers.values()}
        return (str(ip) for ip in self.pool if str(ip) not in taken)

    def _allocate(self, service: Service) -> str:
        wanted = (service.spec.load_balancer_ip if service.spec else None) or ""
        free = list(self._free())
        if wanted:
            if wanted not in free:
                raise ValueError(
                    f"loadBalancerIP {wanted} is not a free address of the local pool "
                    f"({self.pool[0]}-{self.pool[-1]})"
                )
            return wanted
        if not free:
            raise ValueError(
                f"the local load balancer pool ({self.pool[0]}-{self.pool[-1]}) is exhausted"
            )
        return free[0]

    async def ensure_load_balancer(
        self, cluster_name: str, service: Service, nodes: Sequence[Node]
    ) -> LoadBalancerStatus:
        name = default_load_balancer_name(service)
        hosts = tuple(sorted(n.metadata.name or "" for n in nodes))
        found = self.balancers.get(name)
        wanted = (service.spec.load_balancer_ip if service.spec else None) or ""
        if found is None or (wanted and wanted != found.ip):
            ip = self._allocate(service)
            found = LocalBalancer(
                f"{service.metadata.namespace}/{service.metadata.name}", ip, hosts
            )
            self.balancers[name] = found
        found.hosts = hosts
        return self._status(found)

    async def update_load_balancer(
        self, cluster_name: str, service: Service, nodes: Sequence[Node]
    ) -> None:
        found = self.balancers.get(default_load_balancer_name(service))
        if found is not None:
            found.hosts = tuple(sorted(n.metadata.name or "" for n in nodes))

    async def ensure_load_balancer_deleted(self, cluster_name: str, service: Service) -> None:
        self.balancers.pop(default_load_balancer_name(service), None)

    # -- InstancesV2 ---------------------------------------------------------------------

    async def instance_exists(self, node: Node) -> bool:
        return (node.metadata.name or "") not in self.gone

    async def instance_shutdown(self, node: Node) -> bool:
        name = node.metadata.name or ""
        if name in self.gone:
            raise InstanceNotFound(f"local instance {name!r} is gone")
        return name in self.shut_down

    async def instance_metadata(self, node: Node) -> InstanceMetadata:
        name = node.metadata.name or ""
        if name in self.gone:
            raise InstanceNotFound(f"local instance {name!r} is gone")
        labels = _labels(node)
        addresses = tuple((node.status.addresses if node.status else None) or ())
        return InstanceMetadata(
            provider_id=f"local://{name}",
            instance_type=labels.get(LABEL_INSTANCE_TYPE, "kcm-simulated"),
            node_addresses=addresses or (NodeAddress(type="Hostname", address=name),),
            zone=labels.get(LABEL_TOPOLOGY_ZONE, self.zone),
            region=labels.get(LABEL_TOPOLOGY_REGION, self.region),
        )

    # -- Zones ---------------------------------------------------------------------------

    async def get_zone(self) -> Zone:
        return Zone(self.zone, self.region)

    async def get_zone_by_provider_id(self, provider_id: str) -> Zone:
        return Zone(self.zone, self.region)

    async def get_zone_by_node_name(self, node_name: str) -> Zone:
        return Zone(self.zone, self.region)

    # -- Routes --------------------------------------------------------------------------

    async def list_routes(self, cluster_name: str) -> Sequence[Route]:
        return list(self.route_table.values())

    async def create_route(self, cluster_name: str, name_hint: str, route: Route) -> None:
        name = f"{cluster_name}-{name_hint}"
        self.route_table[name] = Route(
            name=name, target_node=route.target_node, destination_cidr=route.destination_cidr
        )

    async def delete_route(self, cluster_name: str, route: Route) -> None:
        self.route_table.pop(route.name, None)

    # -- Clusters ------------------------------------------------------------------------

    async def list_clusters(self) -> Sequence[str]:
        return ["kubernetes"]

    async def master(self, cluster_name: str) -> str:
        return "127.0.0.1"


def new_local_cloud(config: bytes | None) -> LocalCloud:
    """The ``local`` provider's factory: ``config`` is the ``--cloud-config`` YAML.

    Raises:
        ConfigError: not YAML, not a mapping, an unknown key or a bad pool.
    """
    if not config:
        return LocalCloud()
    try:
        data = yaml.safe_load(config)
    except yaml.YAMLError as exc:
        raise ConfigError(f"local cloud config is not YAML: {exc}") from exc
    if data is None:
        return LocalCloud()
    if not isinstance(data, dict):
        raise ConfigError("local cloud config must be a mapping (loadBalancerIPPool, zone, region)")
    keys = {"loadBalancerIPPool": "pool", "zone": "zone", "region": "region"}
    unknown = sorted(set(map(str, data)) - set(keys))
    if unknown:
        raise ConfigError(
            f"unknown local cloud setting(s) {', '.join(unknown)}; known: {', '.join(keys)}"
        )
    return LocalCloud(**{keys[k]: str(v) for k, v in data.items()})
