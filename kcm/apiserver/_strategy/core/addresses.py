"""Cluster IPs and node ports for new Services (kube-apiserver's service allocators, in brief).

Addresses are handed out in order and never reclaimed; the counters live as long as the
:class:`Rest` that owns them (so they start again after a server restart). Cluster IPs come
from kube-apiserver's default ``--service-cluster-ip-range`` 10.0.0.0/24 and go on past it
(10.0.1.1, ...) rather than run out; 10.0.0.1 is the ``kubernetes`` Service's.
"""

from __future__ import annotations

__all__ = ["ServiceAddresses"]

_NODE_PORT_BASE = 30000
_NODE_PORT_COUNT = 2768  # 30000-32767


class ServiceAddresses:
    """The next cluster IP (from 10.0.0.2) and node port (30000-32767) to hand out."""

    def __init__(self) -> None:
        self._next_ip = 1
        self._next_node_port = _NODE_PORT_BASE

    def cluster_ip(self) -> str:
        ip = f"10.0.{self._next_ip // 254}.{self._next_ip % 254 + 1}"
        self._next_ip += 1
        return ip

    def node_port(self) -> int:
        port = self._next_node_port
        self._next_node_port = _NODE_PORT_BASE + (port - (_NODE_PORT_BASE - 1)) % _NODE_PORT_COUNT
        return port
