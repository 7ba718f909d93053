"""An example kcm cloud provider, ``example``: a static inventory of machines and a list of
virtual IPs for load balancers.

Installed as a package, it is found through its ``kcm.cloudproviders`` entry point (see
pyproject.toml): ``kcm cloud-controller-manager --cloud-provider=example
--cloud-config=inventory.yaml``. It implements InstancesV2 (nodes are machines by name),
LoadBalancer (one VIP per Service) and nothing else: the other accessors return None, and the
cloud controllers that need them are not started.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from kcm.cloudprovider import (
    InstanceMetadata,
    InstancesV2,
    LoadBalancer,
    default_load_balancer_name,
)
from kcm.errors import ConfigError, InstanceNotFound
from kcm.models.core_v1 import LoadBalancerIngress, LoadBalancerStatus, Node, NodeAddress, Service

__all__ = ["ExampleCloud", "Machine", "new_cloud"]


@dataclass(frozen=True)
class Machine:
    """One machine of the inventory."""

    type: str
    zone: str
    ip: str


class ExampleCloud:
    """The provider: machines by node name, VIPs handed out in order."""

    def __init__(self, region: str, machines: dict[str, Machine], vips: Sequence[str]) -> None:
        self.region = region
        self.machines = machines
        self.vips = list(vips)
        self.assigned: dict[str, str] = {}  # balancer name -> VIP

    # -- CloudProvider -------------------------------------------------------------------

    @property
    def provider_name(self) -> str:
        return "example"

    def has_cluster_id(self) -> bool:
        return True

    def initialize(self, client: Any, factory: Any) -> None:
        return None

    def load_balancer(self) -> LoadBalancer | None:
        return self

    def instances(self) -> None:
        return None

    def instances_v2(self) -> InstancesV2 | None:
        return self

    def zones(self) -> None:
        return None

    def clusters(self) -> None:
        return None

    def routes(self) -> None:
        return None

    # -- InstancesV2 ---------------------------------------------------------------------

    def _machine(self, node: Node) -> Machine:
        found = self.machines.get(node.metadata.name or "")
        if found is None:
            raise InstanceNotFound(f"no machine named {node.metadata.name!r}")
        return found

    async def instance_exists(self, node: Node) -> bool:
        return (node.metadata.name or "") in self.machines

    async def instance_shutdown(self, node: Node) -> bool:
        self._machine(node)
        return False

    async def instance_metadata(self, node: Node) -> InstanceMetadata:
        machine = self._machine(node)
        return InstanceMetadata(
            provider_id=f"example://{node.metadata.name}",
            instance_type=machine.type,
            node_addresses=(NodeAddress(type="InternalIP", address=machine.ip),),
            zone=machine.zone,
            region=self.region,
        )

    # -- LoadBalancer --------------------------------------------------------------------

    def get_load_balancer_name(self, cluster_name: str, service: Service) -> str:
        return default_load_balancer_name(service)

    def _status(self, vip: str) -> LoadBalancerStatus:
        return LoadBalancerStatus(ingress=[LoadBalancerIngress(ip=vip)])

    async def get_load_balancer(
        self, cluster_name: str, service: Service
    ) -> tuple[LoadBalancerStatus | None, bool]:
        vip = self.assigned.get(default_load_balancer_name(service))
        return (self._status(vip), True) if vip else (None, False)

    async def ensure_load_balancer(
        self, cluster_name: str, service: Service, nodes: Sequence[Node]
    ) -> LoadBalancerStatus:
        name = default_load_balancer_name(service)
        if name not in self.assigned:
            free = [v for v in self.vips if v not in self.assigned.values()]
            if not free:
                raise RuntimeError("no free virtual IP")
            self.assigned[name] = free[0]
        return self._status(self.assigned[name])

    async def update_load_balancer(
        self, cluster_name: str, service: Service, nodes: Sequence[Node]
    ) -> None:
        return None  # a real cloud would point the VIP at the nodes here

    async def ensure_load_balancer_deleted(self, cluster_name: str, service: Service) -> None:
        self.assigned.pop(default_load_balancer_name(service), None)


def new_cloud(config: bytes | None) -> ExampleCloud:
    """The entry point: build the provider from the ``--cloud-config`` YAML.

    Raises:
        ConfigError: no config, or not the expected shape.
    """
    if not config:
        raise ConfigError("the example provider needs --cloud-config (see inventory.yaml)")
    data = yaml.safe_load(config)
    try:
        machines = {name: Machine(**spec) for name, spec in data["machines"].items()}
        return ExampleCloud(str(data["region"]), machines, [str(v) for v in data["vips"]])
    except (KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(f"example provider config: {exc!r}") from exc
