"""The update strategy: defaults, maxSurge/maxUnavailable, and which old pods a RollingUpdate
replaces next (``updatedDesiredNodeCounts``, ``SurgeCount``, ``UnavailableCount``,
``findUpdatedPodsOnNode``, ``rollingUpdate``). Pure functions: the controller does the I/O.

Without surge, old pods are deleted (unavailable ones always, available ones while fewer than
maxUnavailable nodes are unavailable) and the next sync creates their replacements. With
surge, a new pod is created beside an old one (for an unavailable old pod always, for an
available one while fewer than maxSurge nodes are surging) and the old pod is deleted once the
new one is available.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import NamedTuple

import msgspec

from kcm.controllerkit import is_pod_available
from kcm.models import scaled_value
from kcm.models.apps_v1 import (
    DaemonSet,
    DaemonSetSpec,
    DaemonSetUpdateStrategy,
    RollingUpdateDaemonSet,
)
from kcm.models.core_v1 import Pod

from ._pods import is_pod_updated

__all__ = [
    "DEFAULT_REVISION_HISTORY_LIMIT",
    "ON_DELETE",
    "ROLLING_UPDATE",
    "RollingUpdatePlan",
    "allows_surge",
    "find_updated_pods_on_node",
    "max_surge_and_unavailable",
    "plan_rolling_update",
    "surge_count",
    "unavailable_count",
    "with_server_defaults",
]

ROLLING_UPDATE = "RollingUpdate"
ON_DELETE = "OnDelete"
DEFAULT_REVISION_HISTORY_LIMIT = 10


def with_server_defaults(ds: DaemonSet) -> DaemonSet:
    """``ds`` with kube-apiserver's DaemonSet defaults where fields are missing: strategy
    RollingUpdate with maxUnavailable 1 and maxSurge 0, revisionHistoryLimit 10.

    A kube-apiserver always stores them; a server that does not (kcm's embedded one today)
    would otherwise leave the controller without a strategy.
    """
    spec = ds.spec or DaemonSetSpec()
    strategy = spec.update_strategy or DaemonSetUpdateStrategy()
    if not strategy.type:
        strategy = msgspec.structs.replace(strategy, type=ROLLING_UPDATE)
    if strategy.type == ROLLING_UPDATE:
        rolling = strategy.rolling_update or RollingUpdateDaemonSet()
        if rolling.max_unavailable is None:
            rolling = msgspec.structs.replace(rolling, max_unavailable=1)
        if rolling.max_surge is None:
            rolling = msgspec.structs.replace(rolling, max_surge=0)
        strategy = msgspec.structs.replace(strategy, rolling_update=rolling)
    limit = spec.revision_history_limit
    spec = msgspec.structs.replace(
        spec,
        update_strategy=strategy,
        revision_history_limit=DEFAULT_REVISION_HISTORY_LIMIT if limit is None else limit,
    )
    return msgspec.structs.replace(ds, spec=spec)


def _rolling(ds: DaemonSet) -> RollingUpdateDaemonSet | None:
    strategy = ds.spec.update_strategy if ds.spec else None
    if strategy is None or strategy.type != ROLLING_UPDATE:
        return None
    return strategy.rolling_update


def surge_count(ds: DaemonSet, number_to_schedule: int) -> int:
    """maxSurge scaled to ``number_to_schedule`` (percentages round up); 0 unless RollingUpdate.

    Raises:
        ValueError: maxSurge is a string but not a percentage.
    """
    rolling = _rolling(ds)
    if rolling is None or rolling.max_surge is None:
        return 0
    return scaled_value(rolling.max_surge, number_to_schedule, round_up=True)


def unavailable_count(ds: DaemonSet, number_to_schedule: int) -> int:
    """maxUnavailable scaled to ``number_to_schedule`` (percentages round up); 0 unless
    RollingUpdate.

    Raises:
        ValueError: maxUnavailable is missing, or a string but not a percentage.
    """
    rolling = _rolling(ds)
    if rolling is None:
        return 0
    if rolling.max_unavailable is None:
        raise ValueError("nil value for IntOrString")
    return scaled_value(rolling.max_unavailable, number_to_schedule, round_up=True)


def allows_surge(ds: DaemonSet) -> bool:
    """Whether a node may run an old and a new pod at once (maxSurge > 0)."""
    try:
        return surge_count(ds, 1) > 0
    except ValueError:
        return False


def max_surge_and_unavailable(ds: DaemonSet, desired: int) -> tuple[int, int]:
    """``(maxSurge, maxUnavailable)`` for ``desired`` nodes; both 0 means maxUnavailable 1.

    Raises:
        ValueError: an invalid maxSurge or maxUnavailable.
    """
    max_unavailable = unavailable_count(ds, desired)
    max_surge = surge_count(ds, desired)
    if desired > 0 and max_unavailable == 0 and max_surge == 0:
        max_unavailable = 1
    return max_surge, max_unavailable


def find_updated_pods_on_node(
    pods: Sequence[Pod], hash: str, generation: int | None
) -> tuple[Pod | None, Pod | None, bool]:
    """``(new pod, old pod, ok)`` among the node's pods that are not being deleted; ``ok`` is
    False (and both None) when there is more than one of either, which the next sync's manage
    step prunes first."""
    new: Pod | None = None
    old: Pod | None = None
    for pod in pods:
        if pod.metadata.deletion_timestamp is not None:
            continue
        if is_pod_updated(pod, hash, generation):
            if new is not None:
                return None, None, False
            new = pod
        else:
            if old is not None:
                return None, None, False
            old = pod
    return new, old, True


class RollingUpdatePlan(NamedTuple):
    """What one RollingUpdate step does."""

    pods_to_delete: list[Pod]
    """Old pods to delete now."""
    nodes_to_create: list[str]
    """Nodes to create a new pod on now (surge only)."""


def plan_rolling_update(
    ds: DaemonSet,
    node_to_pods: Mapping[str, Sequence[Pod]],
    max_surge: int,
    max_unavailable: int,
    hash: str,
    generation: int | None,
    now: datetime,
) -> RollingUpdatePlan:
    """The next RollingUpdate step over ``node_to_pods`` (every node that should run a pod,
    with or without pods, and every node with pods), nodes taken in name order (Go walks a
    map, in random order).

    Without surge (``max_surge`` 0): a node whose only pod is new and unavailable, that has no
    pod, or an old and a new one, counts as unavailable; an old unavailable pod is always
    deleted; old available pods are deleted while unavailable nodes stay below
    ``max_unavailable``. With surge: a new pod is created next to an old unavailable one, and
    next to old available ones while fewer than ``max_surge`` nodes are waiting for a new pod
    to become available; an old pod whose new neighbour is available is deleted.
    """
    min_ready = (ds.spec.min_ready_seconds if ds.spec else None) or 0
    nodes = sorted(node_to_pods)
    if max_surge == 0:
        unavailable = 0
        replacements: list[Pod] = []
        candidates: list[Pod] = []
        for node in nodes:
            new, old, ok = find_updated_pods_on_node(node_to_pods[node], hash, generation)
            if not ok or (new is None) == (old is None):
                unavailable += 1  # excess pods, no pod, or both: manage handles the node
            elif new is not None:
                if not is_pod_available(new, min_ready, now):
                    unavailable += 1
            elif old is not None:
                if not is_pod_available(old, min_ready, now):
                    replacements.append(old)
                elif unavailable < max_unavailable:
                    candidates.append(old)
        room = max(0, min(max_unavailable - unavailable, len(candidates)))
        return RollingUpdatePlan([*replacements, *candidates[:room]], [])
    surging = 0
    to_delete: list[Pod] = []
    allowed: list[str] = []
    candidate_nodes: list[str] = []
    for node in nodes:
        new, old, ok = find_updated_pods_on_node(node_to_pods[node], hash, generation)
        if not ok:
            surging += 1  # excess pods: manage prunes them
        elif old is None:
            continue  # nothing to replace, or manage creates the missing pod
        elif new is None:
            if not is_pod_available(old, min_ready, now):
                allowed.append(node)
            elif surging < max_surge:
                candidate_nodes.append(node)
        elif not is_pod_available(new, min_ready, now):
            surging += 1  # waiting for the new pod
        else:
            to_delete.append(old)
    room = max(0, min(max_surge - surging, len(candidate_nodes)))
    return RollingUpdatePlan(to_delete, [*allowed, *candidate_nodes[:room]])
