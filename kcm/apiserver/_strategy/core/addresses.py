"""Cluster IPs and node ports of Services (kube-apiserver's service allocators, in brief).

The service CIDR is ``10.96.0.0/12`` and the node port range 30000-32767 (kube-apiserver's
defaults). What is in use is read from the stored Services, so nothing is handed out twice,
also after a restart; free values are handed out in order from a cursor (kube-apiserver picks
them at random).
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

SERVICE_CIDR: Final = ipaddress.ip_network("10.96.0.0/12")
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
        self._next_ip = 2  # 10.96.0.1 is the kubernetes Service's
        self._next_node_port = NODE_PORT_RANGE.start

    def cluster_ip(self, used: set[str]) -> str | None:
        """A free IP of :data:`SERVICE_CIDR` (None when all are taken)."""
        size = SERVICE_CIDR.num_addresses - 2
        for _ in range(size):
            ip = str(SERVICE_CIDR.network_address + self._next_ip)
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
