"""The node IPAM flags, checked as kube-controller-manager checks them at start."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from kcm.errors import ConfigError

from ._cidr_set import Network

__all__ = ["DEFAULT_MASK_IPV4", "DEFAULT_MASK_IPV6", "IPAMSettings", "parse_cidrs"]

DEFAULT_MASK_IPV4 = 24
DEFAULT_MASK_IPV6 = 64


def parse_cidrs(text: str, flag: str) -> list[Network]:
    """Comma-separated CIDRs (at most one per IP family, two in all).

    Raises:
        ConfigError: a CIDR does not parse, more than two, or two of one family.
    """
    cidrs: list[Network] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        try:
            cidrs.append(ipaddress.ip_network(part, strict=False))
        except ValueError as exc:
            raise ConfigError(f"{flag}: {part!r} is not a CIDR ({exc})") from None
    if len(cidrs) > 2:
        raise ConfigError(f"{flag}: at most two CIDRs (one per IP family), got {len(cidrs)}")
    if len(cidrs) == 2 and cidrs[0].version == cidrs[1].version:
        raise ConfigError(f"{flag}: a dual-stack value needs one IPv4 and one IPv6 CIDR")
    return cidrs


@dataclass(frozen=True)
class IPAMSettings:
    """The cluster CIDRs with the node mask size of each, and the service ranges to skip."""

    cluster_cidrs: tuple[Network, ...]
    node_masks: tuple[int, ...]
    service_cidrs: tuple[Network, ...]

    @classmethod
    def from_flags(
        cls,
        *,
        cluster_cidr: str,
        service_cluster_ip_range: str = "",
        node_cidr_mask_size: int = 0,
        node_cidr_mask_size_ipv4: int = 0,
        node_cidr_mask_size_ipv6: int = 0,
    ) -> IPAMSettings:
        """Check the flags (0 for a mask size: not set).

        Raises:
            ConfigError: no cluster CIDR, a bad CIDR, or mask sizes that do not go together
                (kube's messages).
        """
        clusters = parse_cidrs(cluster_cidr, "--cluster-cidr")
        if not clusters:
            raise ConfigError(
                "Controller: Must specify --cluster-cidr if --allocate-node-cidrs is set"
            )
        services = parse_cidrs(service_cluster_ip_range, "--service-cluster-ip-range")
        v4, v6 = DEFAULT_MASK_IPV4, DEFAULT_MASK_IPV6
        if len(clusters) > 1:
            if node_cidr_mask_size:
                raise ConfigError(
                    "usage of --node-cidr-mask-size is not allowed with dual-stack clusters"
                )
            v4 = node_cidr_mask_size_ipv4 or v4
            v6 = node_cidr_mask_size_ipv6 or v6
        elif node_cidr_mask_size:
            if node_cidr_mask_size_ipv4 or node_cidr_mask_size_ipv6:
                raise ConfigError(
                    "usage of --node-cidr-mask-size-ipv4 and --node-cidr-mask-size-ipv6 is not "
                    "allowed if --node-cidr-mask-size is set. For dual-stack clusters please "
                    "unset it and use IPv4/IPv6 respective flags"
                )
            v4 = v6 = node_cidr_mask_size
        elif clusters[0].version == 6 and node_cidr_mask_size_ipv6:
            v6 = node_cidr_mask_size_ipv6
        elif clusters[0].version == 4 and node_cidr_mask_size_ipv4:
            v4 = node_cidr_mask_size_ipv4
        masks = tuple(v6 if c.version == 6 else v4 for c in clusters)
        for cidr, mask in zip(clusters, masks, strict=True):
            if cidr.prefixlen > mask:
                raise ConfigError(
                    "Controller: Invalid --cluster-cidr, mask size of cluster CIDR must be less "
                    "than or equal to --node-cidr-mask-size configured for CIDR family"
                )
        return cls(tuple(clusters), masks, tuple(services))
