"""Zones and their health: which zone a node is in, and how disrupted a zone is (§12).

The node lifecycle controller taints nodes per zone at a rate that depends on how much of the
zone is down, so a network partition that cuts off a whole zone (or the whole cluster) does
not evict everything at once.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

from kcm.models import Node, NodeCondition

__all__ = [
    "EXCLUDE_DISRUPTION_LABEL",
    "ZoneState",
    "compute_zone_state",
    "excluded_from_disruption",
    "zone_key",
    "zone_rate",
]

EXCLUDE_DISRUPTION_LABEL = "node.kubernetes.io/exclude-disruption"
"""A node with this label (any value) does not count towards its zone's health."""

_REGION_LABELS = ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")
_ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")


class ZoneState(enum.Enum):
    """A zone's health as kube-controller-manager names it in its logs."""

    INITIAL = "Initial"
    NORMAL = "Normal"
    FULL_DISRUPTION = "FullDisruption"
    PARTIAL_DISRUPTION = "PartialDisruption"


def _label(node: Node, keys: Sequence[str]) -> str:
    labels = node.metadata.labels or {}
    for key in keys:
        if labels.get(key):
            return labels[key]
    return ""


def zone_key(node: Node) -> str:
    """The node's zone: ``""`` without region and zone labels, else ``region:\\x00:zone``
    (the GA ``topology.kubernetes.io`` labels first, then the beta ``failure-domain`` ones)."""
    region, zone = _label(node, _REGION_LABELS), _label(node, _ZONE_LABELS)
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


def excluded_from_disruption(node: Node) -> bool:
    """Whether the node carries :data:`EXCLUDE_DISRUPTION_LABEL`."""
    return EXCLUDE_DISRUPTION_LABEL in (node.metadata.labels or {})


def compute_zone_state(
    ready_conditions: Sequence[NodeCondition | None], unhealthy_threshold: float
) -> tuple[int, ZoneState]:
    """How many of a zone's nodes are not Ready, and the zone's state.

    FullDisruption when none is Ready; PartialDisruption when more than two are not Ready and
    they are at least ``unhealthy_threshold`` of the zone; Normal otherwise. A node without a
    Ready condition counts as not Ready.
    """
    ready = sum(1 for c in ready_conditions if c is not None and c.status == "True")
    not_ready = len(ready_conditions) - ready
    if ready == 0 and not_ready > 0:
        return not_ready, ZoneState.FULL_DISRUPTION
    if not_ready > 2 and not_ready / (not_ready + ready) >= unhealthy_threshold:
        return not_ready, ZoneState.PARTIAL_DISRUPTION
    return not_ready, ZoneState.NORMAL


def zone_rate(
    state: ZoneState,
    zone_size: int,
    *,
    eviction_rate: float,
    secondary_eviction_rate: float,
    large_cluster_threshold: int,
) -> float:
    """Nodes per second the zone's NoExecute tainter may taint in ``state``.

    Normal and FullDisruption (of this zone only; all zones down stops tainting altogether,
    which the controller decides) use ``eviction_rate``; PartialDisruption uses
    ``secondary_eviction_rate`` in a zone of more than ``large_cluster_threshold`` nodes and
    stops tainting in a smaller one.
    """
    if state is ZoneState.PARTIAL_DISRUPTION:
        return secondary_eviction_rate if zone_size > large_cluster_threshold else 0.0
    return eviction_rate
