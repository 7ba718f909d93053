"""Pod IPs for the simulated kubelet: one address per CIDR of the node's ``spec.podCIDRs``.

A real node's container network plugin (host-local IPAM behind a bridge) hands each new pod
sandbox the next free address of the node's pod CIDR, round-robin from ``.2`` (``.1`` is the
bridge's gateway), so a freed address is not reused at once. :class:`PodIPAllocator` does the
same for the simulated nodes; addresses of pods still holding one are never handed out twice.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence

__all__ = ["PodIPAllocator", "PodIPsExhausted"]

_Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class PodIPsExhausted(Exception):
    """Every address of a node's pod CIDR is taken."""


class PodIPAllocator:
    """Round-robin pod IPs per node and CIDR (synchronous; the kubelet calls it per start).

    The caller says which addresses are in use (pods on the node that have an IP and are
    neither finished nor gone); the allocator also remembers what it handed out since.
    """

    def __init__(self) -> None:
        self._last: dict[tuple[str, str], int] = {}
        self._handed: dict[str, dict[str, list[str]]] = {}  # node -> {pod uid: its IPs}

    def __repr__(self) -> str:
        return f"<PodIPAllocator nodes={len(self._handed)}>"

    def allocate(
        self, node: str, cidrs: Sequence[str], uid: str, in_use: Iterable[str]
    ) -> list[str]:
        """One address per CIDR (in order) for pod ``uid`` on ``node``.

        Raises:
            ValueError: a CIDR does not parse.
            PodIPsExhausted: a CIDR has no free address left.
        """
        handed = self._handed.setdefault(node, {})
        handed.pop(uid, None)  # a pod started again gets new addresses
        taken = set(in_use) | {ip for ips in handed.values() for ip in ips}
        ips = [self._next(node, ipaddress.ip_network(c, strict=False), taken) for c in cidrs]
        handed[uid] = ips
        return ips

    def release(self, uid: str) -> None:
        """Forget the addresses handed to pod ``uid`` (it is gone or finished)."""
        for handed in self._handed.values():
            handed.pop(uid, None)

    def _next(self, node: str, network: _Network, taken: set[str]) -> str:
        first = int(network.network_address) + 2  # .0 the network, .1 the gateway
        last = int(network.broadcast_address) - (1 if network.version == 4 else 0)
        size = last - first + 1
        if size < 1:
            raise PodIPsExhausted(f"pod CIDR {network} of node {node} is too small")
        key = (node, str(network))
        start = self._last.get(key, first - 1) + 1
        for step in range(min(size, len(taken) + 1)):
            candidate = first + (start - first + step) % size
            ip = str(ipaddress.ip_address(candidate))
            if ip not in taken:
                self._last[key] = candidate
                return ip
        raise PodIPsExhausted(f"no free address left in pod CIDR {network} of node {node}")
