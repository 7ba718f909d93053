"""Node subnets carved out of one cluster CIDR, handed out round-robin (kube's ``cidrset``)."""

from __future__ import annotations

import ipaddress

__all__ = ["CIDRRangeExhausted", "CIDRSet", "Network"]

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

_MAX_MASK_DIFF = 16  # kube: clusterSubnetMaxDiff, at most 65536 node subnets


class CIDRRangeExhausted(Exception):
    """Every node subnet of the cluster CIDR is taken (kube: "CIDR allocation failed; there
    are no remaining CIDRs left to allocate in the accepted range")."""


class CIDRSet:
    """The ``/node_mask`` subnets of ``cluster``: which are used, and the next to try.

    Raises:
        ValueError: the node mask is shorter than the cluster's, longer than the address, or
            more than 16 bits longer than the cluster's.
    """

    def __init__(self, cluster: Network, node_mask: int) -> None:
        bits = cluster.max_prefixlen
        if not cluster.prefixlen <= node_mask <= bits:
            raise ValueError(
                f"node CIDR mask size {node_mask} does not fit cluster CIDR {cluster}: it must "
                f"be between {cluster.prefixlen} and {bits}"
            )
        if node_mask - cluster.prefixlen > _MAX_MASK_DIFF:
            raise ValueError(
                f"node CIDR mask size {node_mask} is too small for cluster CIDR {cluster}: "
                f"at most {_MAX_MASK_DIFF} bits more than the cluster's {cluster.prefixlen}"
            )
        self.cluster = cluster
        self.node_mask = node_mask
        self.size = 1 << (node_mask - cluster.prefixlen)
        self._shift = bits - node_mask
        self._used: set[int] = set()
        self._next = 0

    def __repr__(self) -> str:
        return f"<CIDRSet {self.cluster} /{self.node_mask} used={len(self._used)}/{self.size}>"

    @property
    def used(self) -> int:
        """Node subnets taken."""
        return len(self._used)

    def _subnet(self, index: int) -> Network:
        base = int(self.cluster.network_address) + (index << self._shift)
        return ipaddress.ip_network((base, self.node_mask))

    def allocate_next(self) -> Network:
        """The next free node subnet, round-robin from the last one handed out.

        Raises:
            CIDRRangeExhausted: none is free.
        """
        for step in range(self.size):
            candidate = (self._next + step) % self.size
            if candidate not in self._used:
                self._used.add(candidate)
                self._next = (candidate + 1) % self.size
                return self._subnet(candidate)
        raise CIDRRangeExhausted(
            "CIDR allocation failed; there are no remaining CIDRs left to allocate in the "
            "accepted range"
        )

    def _indices(self, cidr: Network) -> range:
        if cidr.version != self.cluster.version or not (cidr.overlaps(self.cluster)):
            raise ValueError(f"cidr {cidr} is out the range of cluster cidr {self.cluster}")
        first = max(int(cidr.network_address), int(self.cluster.network_address))
        last = min(int(cidr.broadcast_address), int(self.cluster.broadcast_address))
        base = int(self.cluster.network_address)
        return range((first - base) >> self._shift, ((last - base) >> self._shift) + 1)

    def occupy(self, cidr: Network) -> None:
        """Mark every node subnet overlapping ``cidr`` used.

        Raises:
            ValueError: ``cidr`` is outside the cluster CIDR.
        """
        self._used.update(self._indices(cidr))

    def release(self, cidr: Network) -> None:
        """Free every node subnet overlapping ``cidr``.

        Raises:
            ValueError: ``cidr`` is outside the cluster CIDR.
        """
        self._used.difference_update(self._indices(cidr))
