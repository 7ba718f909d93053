"""The rollout arithmetic as pure functions over lists of ReplicaSets.

Each ``plan_*`` function returns what the controller should do (a list of
:class:`ScaleStep`, a ReplicaSet size, ReplicaSets to delete) and the controller performs it
in order, stopping at the first failure as Kubernetes does. Status functions return the new
status; the caller compares and writes it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

import msgspec

from kcm.models.apps_v1 import (
    Deployment,
    DeploymentCondition,
    DeploymentStatus,
    ReplicaSet,
    ReplicaSetSpec,
)
from kcm.models.core_v1 import Pod

from ._util import (
    AVAILABLE,
    MINIMUM_REPLICAS_AVAILABLE,
    MINIMUM_REPLICAS_UNAVAILABLE,
    NEW_RS_AVAILABLE_REASON,
    PROGRESSING,
    REPLICA_FAILURE,
    REPLICA_SET_UPDATED_REASON,
    TIMED_OUT_REASON,
    active_replica_sets,
    available_replicas,
    deployment_complete,
    deployment_progressing,
    deployment_replicas,
    deployment_timed_out,
    find_active_or_latest,
    get_condition,
    has_progress_deadline,
    has_revision_history_limit,
    is_rolling_update,
    is_saturated,
    max_replicas_annotation,
    max_surge,
    max_unavailable,
    new_condition,
    remove_condition,
    replica_set_to_deployment_condition,
    round_half_away,
    rs_replicas,
    set_condition,
    sort_by_creation,
    sort_by_revision,
    sort_by_size_newer,
    sort_by_size_older,
    total_actual_replicas,
    total_available_replicas,
    total_ready_replicas,
    total_replicas,
)

__all__ = [
    "ScaleStep",
    "calculate_status",
    "cleanup_candidates",
    "max_scaled_down",
    "new_rs_new_replicas",
    "old_pods_running",
    "plan_cleanup_unhealthy",
    "plan_new_replica_set",
    "plan_proportional_scale",
    "plan_scale",
    "plan_scale_down_old",
    "rollout_status",
    "stuck_requeue_after",
    "with_replicas",
]


@dataclass(frozen=True, slots=True)
class ScaleStep:
    """Set ``rs`` to ``replicas``; ``direction`` ("up"/"down") words the event."""

    rs: ReplicaSet
    replicas: int
    direction: str


def with_replicas(rs: ReplicaSet, replicas: int) -> ReplicaSet:
    """A copy of ``rs`` with spec.replicas set (to plan further steps on)."""
    spec = rs.spec or ReplicaSetSpec()
    return msgspec.structs.replace(rs, spec=msgspec.structs.replace(spec, replicas=replicas))


def _step(rs: ReplicaSet, replicas: int) -> ScaleStep:
    return ScaleStep(rs, replicas, "up" if rs_replicas(rs) < replicas else "down")


def new_rs_new_replicas(d: Deployment, all_rss: Sequence[ReplicaSet], new_rs: ReplicaSet) -> int:
    """The size the new ReplicaSet may grow to now (``NewRSNewReplicas``).

    RollingUpdate: up to spec.replicas, without Σ spec.replicas exceeding replicas + maxSurge
    (its current size if the total is already at the limit). Recreate: spec.replicas.
    """
    replicas = deployment_replicas(d)
    if not is_rolling_update(d):
        return replicas
    current = total_replicas(all_rss)
    max_total = replicas + max_surge(d)
    if current >= max_total:
        return rs_replicas(new_rs)
    scale_up = min(max_total - current, replicas - rs_replicas(new_rs))
    return rs_replicas(new_rs) + scale_up


def plan_new_replica_set(
    d: Deployment, all_rss: Sequence[ReplicaSet], new_rs: ReplicaSet
) -> int | None:
    """``reconcileNewReplicaSet``: the new ReplicaSet's next size, or None to leave it."""
    replicas = deployment_replicas(d)
    current = rs_replicas(new_rs)
    if current == replicas:
        return None
    target = replicas if current > replicas else new_rs_new_replicas(d, all_rss, new_rs)
    return None if target == current else target


def max_scaled_down(d: Deployment, all_rss: Sequence[ReplicaSet], new_rs: ReplicaSet) -> int:
    """How many old replicas may go: Σspec - minAvailable - the new RS's unavailable ones."""
    min_available = deployment_replicas(d) - max_unavailable(d)
    new_unavailable = rs_replicas(new_rs) - available_replicas(new_rs)
    return total_replicas(all_rss) - min_available - new_unavailable


def plan_cleanup_unhealthy(old_rss: Sequence[ReplicaSet], budget: int) -> list[ScaleStep]:
    """Scale old ReplicaSets down by their unavailable replicas, oldest first, at most
    ``budget`` in total (unhealthy pods must not block a rollout, kubernetes#16737)."""
    steps: list[ScaleStep] = []
    total = 0
    for rs in sort_by_creation(old_rss):
        if total >= budget:
            break
        spec = rs_replicas(rs)
        unhealthy = spec - available_replicas(rs)
        if spec == 0 or unhealthy <= 0:
            continue
        count = min(budget - total, unhealthy)
        steps.append(ScaleStep(rs, spec - count, "down"))
        total += count
    return steps


def plan_scale_down_old(
    d: Deployment, all_rss: Sequence[ReplicaSet], old_rss: Sequence[ReplicaSet]
) -> list[ScaleStep]:
    """Scale old ReplicaSets down, oldest first, by Σavailable - minAvailable in total."""
    min_available = deployment_replicas(d) - max_unavailable(d)
    available = total_available_replicas(all_rss)
    if available <= min_available:
        return []
    budget = available - min_available
    steps: list[ScaleStep] = []
    total = 0
    for rs in sort_by_creation(old_rss):
        if total >= budget:
            break
        spec = rs_replicas(rs)
        if spec == 0:
            continue
        count = min(spec, budget - total)
        steps.append(ScaleStep(rs, spec - count, "down"))
        total += count
    return steps


def plan_proportional_scale(
    d: Deployment, new_rs: ReplicaSet | None, old_rss: Sequence[ReplicaSet]
) -> list[ScaleStep]:
    """Share a change of spec.replicas among the active ReplicaSets of a RollingUpdate in
    proportion to their size (``rs.spec * allowed / max-replicas annotation``).

    Largest first (newer first when growing, older first when shrinking); the rounding
    leftover goes to the first. Every active ReplicaSet gets a step (its annotations are
    rewritten even when its size stays).
    """
    all_rss = active_replica_sets([*old_rss, new_rs])
    replicas = deployment_replicas(d)
    allowed = replicas + max_surge(d) if replicas > 0 else 0
    to_add = allowed - total_replicas(all_rss)
    if to_add > 0:
        ordered, direction = sort_by_size_newer(all_rss), "up"
    elif to_add < 0:
        ordered, direction = sort_by_size_older(all_rss), "down"
    else:
        ordered, direction = all_rss, ""
    sizes: dict[str, int] = {}
    added = 0
    for rs in ordered:
        name = rs.metadata.name or ""
        if to_add != 0:
            proportion = _proportion(rs, d, to_add, added)
            sizes[name] = rs_replicas(rs) + proportion
            added += proportion
        else:
            sizes[name] = rs_replicas(rs)
    steps: list[ScaleStep] = []
    for i, rs in enumerate(ordered):
        name = rs.metadata.name or ""
        if i == 0 and to_add != 0:
            sizes[name] = max(0, sizes[name] + to_add - added)
        steps.append(ScaleStep(rs, sizes[name], direction))
    return steps


def _proportion(rs: ReplicaSet, d: Deployment, to_add: int, added: int) -> int:
    """``GetProportion``: this ReplicaSet's share, never past what is left to add/remove."""
    if rs_replicas(rs) == 0 or to_add == 0 or to_add == added:
        return 0
    fraction = _fraction(rs, d)
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


def _fraction(rs: ReplicaSet, d: Deployment) -> int:
    replicas = deployment_replicas(d)
    if replicas == 0:
        return -rs_replicas(rs)
    deployment_max = replicas + max_surge(d)
    before = max_replicas_annotation(rs)
    if not before:
        before = (d.status.replicas or 0) if d.status is not None else 0
        if before == 0:
            return 0
    size = rs_replicas(rs) * deployment_max / before
    return round_half_away(size) - rs_replicas(rs)


def plan_scale(
    d: Deployment, new_rs: ReplicaSet | None, old_rss: Sequence[ReplicaSet]
) -> list[ScaleStep]:
    """``scale()``: what to do when paused or when spec.replicas changed.

    * One active ReplicaSet (or none: the newest) → set it to spec.replicas.
    * The new ReplicaSet is saturated → old active ones to 0.
    * RollingUpdate → :func:`plan_proportional_scale`.
    """
    replicas = deployment_replicas(d)
    only = find_active_or_latest(new_rs, old_rss)
    if only is not None:
        return [] if rs_replicas(only) == replicas else [_step(only, replicas)]
    if is_saturated(d, new_rs):
        return [ScaleStep(rs, 0, "down") for rs in active_replica_sets(old_rss)]
    if is_rolling_update(d):
        return plan_proportional_scale(d, new_rs, old_rss)
    return []


def cleanup_candidates(d: Deployment, old_rss: Sequence[ReplicaSet]) -> list[ReplicaSet]:
    """Old ReplicaSets past revisionHistoryLimit to delete, lowest revision first: only
    those scaled to 0 (spec and status), observed and not already deleting."""
    if not has_revision_history_limit(d):
        return []
    limit = d.spec.revision_history_limit if d.spec is not None else None
    alive = [rs for rs in old_rss if rs.metadata.deletion_timestamp is None]
    diff = len(alive) - (limit or 0)
    if diff <= 0:
        return []
    out: list[ReplicaSet] = []
    for rs in sort_by_revision(alive)[:diff]:
        status = rs.status
        observed = (status.observed_generation or 0) if status is not None else 0
        if (
            (status.replicas or 0 if status is not None else 0) != 0
            or rs_replicas(rs) != 0
            or (rs.metadata.generation or 0) > observed
        ):
            continue
        out.append(rs)
    return out


def old_pods_running(
    new_rs: ReplicaSet | None,
    old_rss: Sequence[ReplicaSet],
    pods_by_rs_uid: Mapping[str, Sequence[Pod]],
) -> bool:
    """Recreate waits while an old ReplicaSet reports pods or an old pod is not finished."""
    if total_actual_replicas(old_rss) > 0:
        return True
    new_uid = new_rs.metadata.uid if new_rs is not None else None
    for uid, pods in pods_by_rs_uid.items():
        if uid == new_uid:
            continue
        for pod in pods:
            phase = pod.status.phase if pod.status is not None else None
            if phase not in ("Failed", "Succeeded"):
                return True
    return False


def calculate_status(
    all_rss: Sequence[ReplicaSet | None], new_rs: ReplicaSet | None, d: Deployment, now: datetime
) -> DeploymentStatus:
    """Counts from the ReplicaSets, observedGeneration, collisionCount kept, conditions kept
    and ``Available`` set from availableReplicas ≥ replicas - maxUnavailable."""
    available = total_available_replicas(all_rss)
    total = total_replicas(all_rss)
    old = d.status or DeploymentStatus()
    conditions = list(old.conditions or [])
    if available >= deployment_replicas(d) - max_unavailable(d):
        cond = new_condition(
            AVAILABLE,
            "True",
            MINIMUM_REPLICAS_AVAILABLE,
            "Deployment has minimum availability.",
            now,
        )
    else:
        cond = new_condition(
            AVAILABLE,
            "False",
            MINIMUM_REPLICAS_UNAVAILABLE,
            "Deployment does not have minimum availability.",
            now,
        )
    return DeploymentStatus(
        observed_generation=d.metadata.generation,
        replicas=total_actual_replicas(all_rss),
        updated_replicas=total_actual_replicas([new_rs]),
        ready_replicas=total_ready_replicas(all_rss),
        available_replicas=available,
        unavailable_replicas=max(0, total - available),
        collision_count=old.collision_count,
        conditions=set_condition(conditions, cond),
    )


def rollout_status(
    all_rss: Sequence[ReplicaSet | None], new_rs: ReplicaSet | None, d: Deployment, now: datetime
) -> DeploymentStatus:
    """``syncRolloutStatus`` without the write: :func:`calculate_status` plus the
    ``Progressing`` condition (complete, progressing or timed out) and ``ReplicaFailure``."""
    status = calculate_status(all_rss, new_rs, d, now)
    conditions = status.conditions
    if not has_progress_deadline(d):
        conditions = remove_condition(conditions, PROGRESSING)
        status = msgspec.structs.replace(status, conditions=conditions)
    current = get_condition((d.status.conditions if d.status else None), PROGRESSING)
    complete_already = (
        (status.replicas or 0) == (status.updated_replicas or 0)
        and current is not None
        and current.reason == NEW_RS_AVAILABLE_REASON
    )
    rs_name = new_rs.metadata.name if new_rs is not None else None
    subject = f'ReplicaSet "{rs_name}"' if rs_name else f'Deployment "{d.metadata.name}"'
    if has_progress_deadline(d) and not complete_already:
        if deployment_complete(d, status):
            msg = f"{subject} has successfully progressed."
            cond = new_condition(PROGRESSING, "True", NEW_RS_AVAILABLE_REASON, msg, now)
            conditions = set_condition(conditions, cond)
        elif deployment_progressing(d, status):
            msg = f"{subject} is progressing."
            cond = new_condition(PROGRESSING, "True", REPLICA_SET_UPDATED_REASON, msg, now)
            if current is not None:
                if current.status == "True":
                    cond = msgspec.structs.replace(
                        cond, last_transition_time=current.last_transition_time
                    )
                conditions = remove_condition(conditions, PROGRESSING)
            conditions = set_condition(conditions, cond)
        elif deployment_timed_out(d, status, now):
            msg = f"{subject} has timed out progressing."
            cond = new_condition(PROGRESSING, "False", TIMED_OUT_REASON, msg, now)
            conditions = set_condition(conditions, cond)
    failures = _replica_failures(all_rss, new_rs)
    if failures:
        conditions = set_condition(conditions, failures[0])
    else:
        conditions = remove_condition(conditions, REPLICA_FAILURE)
    return msgspec.structs.replace(status, conditions=conditions)


def _replica_failures(
    all_rss: Sequence[ReplicaSet | None], new_rs: ReplicaSet | None
) -> list[DeploymentCondition]:
    def of(rs: ReplicaSet | None) -> list[DeploymentCondition]:
        if rs is None or rs.status is None:
            return []
        return [
            replica_set_to_deployment_condition(c)
            for c in rs.status.conditions or ()
            if c.type == REPLICA_FAILURE
        ]

    found = of(new_rs)
    if found:
        return found
    return [c for rs in all_rss for c in of(rs)]


def stuck_requeue_after(d: Deployment, new_status: DeploymentStatus, now: datetime) -> float | None:
    """``requeueStuckDeployment``: seconds until the progress deadline could pass (+1 s), 0
    for "soon, with backoff", None when there is nothing to wait for."""
    if not has_progress_deadline(d):
        return None
    current = get_condition((d.status.conditions if d.status else None), PROGRESSING)
    if current is None or current.last_update_time is None:
        return None
    if deployment_complete(d, new_status) or current.reason == TIMED_OUT_REASON:
        return None
    deadline = d.spec.progress_deadline_seconds if d.spec is not None else 0
    after = (current.last_update_time - now).total_seconds() + (deadline or 0)
    if after < 1:
        return 0.0
    return after + 1.0
