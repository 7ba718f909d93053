"""Cluster IPs and node ports of Services (kube-apiserver's service allocators, in brief).

The service CIDR is ``10.0.0.0/24`` (kube-apiserver's default ``--service-cluster-ip-range``;
10.0.0.1 is the ``kubernetes`` Service's) and the node port range 30000-32767. What is in use is
read from the stored Services, so nothing is handed out twice, also after a restart; free values
are handed out in order from a cursor (kube-apiserver picks them at random). Where a full /24
would refuse a new Service, kcm goes on past it (10.0.1.0, ...): tests and simulations with
many Services keep working; an IP a client asks for must still be in the /24.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Any, Final

__all__ = [
    "NODE_PORT_RANGE",
    "SERVICE_CIDR",
    "ServiceAddresses",
    "used_cluster_ips",
    "used_node_ports",
]

SERVICE_CIDR: Final = ipaddress.ip_network("10.0.0.0/24")
_ALLOCATED_FROM: Final = ipaddress.ip_network("10.0.0.0/16")
"""Where allocation goes on once :data:`SERVICE_CIDR` is full."""
NODE_PORT_RANGE: Final = range(30000, 32768)


def used_cluster_ips(services: Iterable[Any]) -> set[str]:
    return {
        ip
        for svc in services
        for ip in ((svc.get("spec") or {}).get("clusterIPs") or [])
        if isinstance(ip, str)
    }


def used_node_ports(services: Iterable[Any]) -> set[int]:
    return {
        int(port["nodePort"])
        for svc in services
        for port in ((svc.get("spec") or {}).get("ports") or [])
        if isinstance(port, dict) and port.get("nodePort")
    } | {
        int(svc["spec"]["healthCheckNodePort"])
        for svc in services
        if (svc.get("spec") or {}).get("healthCheckNodePort")
    }


class ServiceAddresses:
    """Cursors for the next free cluster IP and node port."""

    def __init__(self) -> None:
        self._next_ip = 2  # 10.0.0.1 is the kubernetes Service's
        self._next_node_port = NODE_PORT_RANGE.start

    def cluster_ip(self, used: set[str]) -> str | None:
        """A free IP of :data:`SERVICE_CIDR`, then past it (None when all are taken)."""
        size = _ALLOCATED_FROM.num_addresses - 2
        for _ in range(size):
            ip = str(_ALLOCATED_FROM.network_address + self._next_ip)
            self._next_ip = self._next_ip % size + 1
            if ip not in used:
                return ip
        return None

    def node_port(self, used: set[int]) -> int | None:
        """A free port of :data:`NODE_PORT_RANGE` (None when all are taken)."""
        for _ in NODE_PORT_RANGE:
            port = self._next_node_port
            self._next_node_port = (
                port + 1 if port + 1 < NODE_PORT_RANGE.stop else NODE_PORT_RANGE.start
            )
            if port not in used:
                return port
        return None
