"""A budget's arithmetic: pure functions of the PDB, its pods and a time (Go's
``getExpectedPodCount`` after the scale lookup, ``buildDisruptedPodMap``, ``countHealthyPods``,
``updatePdbStatus`` and ``failSafe``, with ``pdbhelper``'s condition rules).

Kept apart from the controller so every rule is tested without a server or a clock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import msgspec

from kcm.controllerkit import is_pod_ready
from kcm.models import scaled_value
from kcm.models.core_v1 import Pod
from kcm.models.meta_v1 import Condition
from kcm.models.policy_v1 import PodDisruptionBudget, PodDisruptionBudgetStatus

__all__ = [
    "DELETION_TIMEOUT",
    "DISRUPTION_ALLOWED",
    "BudgetStatus",
    "DisruptedPods",
    "count_healthy_pods",
    "desired_healthy",
    "disrupted_pods",
    "fail_safe_status",
    "needs_expected_scale",
    "new_status",
    "status_is_current",
    "status_of",
]

DELETION_TIMEOUT = timedelta(minutes=2)
"""How long a pod the eviction API recorded in ``disruptedPods`` is counted as gone before
the controller decides it was not deleted after all (Go's ``DeletionTimeout``)."""

DISRUPTION_ALLOWED = "DisruptionAllowed"
"""The condition type (``policy.DisruptionAllowedCondition``)."""


def _utc(t: datetime) -> datetime:
    return t.replace(tzinfo=UTC) if t.tzinfo is None else t.astimezone(UTC)


@dataclass(frozen=True, slots=True)
class DisruptedPods:
    """The ``disruptedPods`` entries still pending, and when to look again.

    Attributes:
        pods: pod name -> when the eviction API let it go, for pods that still exist, are not
            being deleted and whose entry has not expired.
        recheck_at: the earliest expiry among them (None: nothing to recheck).
        expired: names of pods whose entry expired without a deletion (Go's ``NotDeleted``
            warning goes on each).
    """

    pods: Mapping[str, datetime]
    recheck_at: datetime | None
    expired: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class BudgetStatus:
    """The numbers one sync computes (the fields of ``PodDisruptionBudgetStatus`` it owns)."""

    current_healthy: int
    desired_healthy: int
    expected_pods: int
    disruptions_allowed: int
    disrupted_pods: Mapping[str, datetime]


def needs_expected_scale(pdb: PodDisruptionBudget) -> bool:
    """Whether the budget is counted against its pods' controllers' scale: ``maxUnavailable``,
    or ``minAvailable`` as a percentage. An integer ``minAvailable`` counts the pods."""
    spec = pdb.spec
    if spec is None:
        return False
    if spec.max_unavailable is not None:
        return True
    return isinstance(spec.min_available, str)


def desired_healthy(pdb: PodDisruptionBudget, pods: int, expected: int) -> tuple[int, int]:
    """``(expectedPods, desiredHealthy)`` for ``pods`` selected pods and ``expected`` (the
    controllers' scale, when :func:`needs_expected_scale`), percentages rounded up as Go's
    ``GetScaledValueFromIntOrPercent(..., true)``.

    Raises:
        ValueError: a string that is not a percentage (Go's message).
    """
    spec = pdb.spec
    if spec is None:
        return 0, 0
    try:
        if spec.max_unavailable is not None:
            unavailable = scaled_value(spec.max_unavailable, expected, round_up=True)
            return expected, max(expected - unavailable, 0)
        if spec.min_available is None:
            return 0, 0
        if isinstance(spec.min_available, int):
            return pods, spec.min_available
        return expected, scaled_value(spec.min_available, expected, round_up=True)
    except ValueError:
        value = spec.max_unavailable if spec.max_unavailable is not None else spec.min_available
        if isinstance(value, str) and value.endswith("%"):
            raise ValueError(
                f'invalid value for IntOrString: invalid value "{value}": strconv.Atoi: '
                f'parsing "{value[:-1]}": invalid syntax'
            ) from None
        raise ValueError(
            "invalid value for IntOrString: invalid type: string is not a percentage"
        ) from None


def disrupted_pods(pdb: PodDisruptionBudget, pods: Sequence[Pod], now: datetime) -> DisruptedPods:
    """``buildDisruptedPodMap``: the status's ``disruptedPods`` kept for pods that exist and
    are not being deleted, unless their two minutes have passed; entries of deleted or
    deleting pods are dropped (their disruption happened)."""
    recorded = (pdb.status.disrupted_pods if pdb.status else None) or {}
    if not recorded:
        return DisruptedPods({}, None)
    now = _utc(now)
    kept: dict[str, datetime] = {}
    expired: list[str] = []
    recheck: datetime | None = None
    for pod in pods:
        name = pod.metadata.name or ""
        if pod.metadata.deletion_timestamp is not None or name not in recorded:
            continue
        at = recorded[name]
        expected_deletion = _utc(at) + DELETION_TIMEOUT
        if expected_deletion < now:
            expired.append(name)
            continue
        if recheck is None or expected_deletion < recheck:
            recheck = expected_deletion
        kept[name] = at
    return DisruptedPods(kept, recheck, tuple(expired))


def count_healthy_pods(
    pods: Sequence[Pod], disrupted: Mapping[str, datetime], now: datetime
) -> int:
    """``countHealthyPods``: Ready pods not being deleted and not recorded as disrupted
    within the last two minutes."""
    now = _utc(now)
    healthy = 0
    for pod in pods:
        if pod.metadata.deletion_timestamp is not None:
            continue
        at = disrupted.get(pod.metadata.name or "")
        if at is not None and _utc(at) + DELETION_TIMEOUT > now:
            continue
        if is_pod_ready(pod):
            healthy += 1
    return healthy


def _allowed(current: int, desired: int, expected: int) -> int:
    """Disruptions allowed: none while the budget expects no pods (a budget whose first pods
    appear before its first sync must be safe) or is at or below its floor."""
    allowed = current - desired
    return 0 if expected <= 0 or allowed <= 0 else allowed


def _condition(
    conditions: Sequence[Condition] | None, wanted: Condition, now: datetime
) -> list[Condition]:
    """``meta.SetStatusCondition``: replace the condition of ``wanted``'s type, keeping its
    lastTransitionTime unless the status changes."""
    result = list(conditions or ())
    for i, existing in enumerate(result):
        if existing.type != wanted.type:
            continue
        transition = existing.last_transition_time
        if existing.status != wanted.status or transition is None:
            transition = now
        result[i] = msgspec.structs.replace(wanted, last_transition_time=transition)
        return result
    result.append(msgspec.structs.replace(wanted, last_transition_time=now))
    return result


def _disruption_condition(allowed: int, observed_generation: int | None) -> Condition:
    if allowed > 0:
        return Condition(
            type=DISRUPTION_ALLOWED,
            status="True",
            reason="SufficientPods",
            message="",
            observed_generation=observed_generation,
        )
    return Condition(
        type=DISRUPTION_ALLOWED,
        status="False",
        reason="InsufficientPods",
        message="",
        observed_generation=observed_generation,
    )


def _whole_seconds(t: datetime) -> datetime:
    return _utc(t).replace(microsecond=0)


def status_of(
    pdb: PodDisruptionBudget,
    pods: Sequence[Pod],
    expected: int,
    desired: int,
    now: datetime,
) -> tuple[BudgetStatus, DisruptedPods]:
    """The numbers of one sync (before the write): expected and desired as
    :func:`desired_healthy` gave them."""
    disrupted = disrupted_pods(pdb, pods, now)
    current = count_healthy_pods(pods, disrupted.pods, now)
    status = BudgetStatus(
        current_healthy=current,
        desired_healthy=desired,
        expected_pods=expected,
        disruptions_allowed=_allowed(current, desired, expected),
        disrupted_pods=disrupted.pods,
    )
    return status, disrupted


def _same_times(a: Mapping[str, datetime] | None, b: Mapping[str, datetime]) -> bool:
    a = a or {}
    return a.keys() == b.keys() and all(_utc(a[k]) == _utc(b[k]) for k in a)


def status_is_current(pdb: PodDisruptionBudget, status: BudgetStatus) -> bool:
    """Go's early return in ``updatePdbStatus``: every number, the disrupted pods, the observed
    generation and the DisruptionAllowed condition (``ConditionsAreUpToDate``) already say so."""
    old = pdb.status or PodDisruptionBudgetStatus()
    generation = pdb.metadata.generation or 0
    if (
        (old.current_healthy or 0) != status.current_healthy
        or (old.desired_healthy or 0) != status.desired_healthy
        or (old.expected_pods or 0) != status.expected_pods
        or (old.disruptions_allowed or 0) != status.disruptions_allowed
        or not _same_times(old.disrupted_pods, status.disrupted_pods)
        or (old.observed_generation or 0) != generation
    ):
        return False
    condition = next((c for c in old.conditions or () if c.type == DISRUPTION_ALLOWED), None)
    if condition is None:
        return False
    if (old.disruptions_allowed or 0) > 0:
        return condition.status == "True" and condition.reason == "SufficientPods"
    return condition.status == "False" and condition.reason == "InsufficientPods"


def new_status(
    pdb: PodDisruptionBudget, status: BudgetStatus, now: datetime
) -> PodDisruptionBudget:
    """The PDB with the status a sync writes. As in kube-controller-manager 1.24 the status is
    built afresh, so the DisruptionAllowed condition is the only condition and its
    lastTransitionTime is the time of this write."""
    generation = pdb.metadata.generation or None
    fresh = PodDisruptionBudgetStatus(
        current_healthy=status.current_healthy,
        desired_healthy=status.desired_healthy,
        expected_pods=status.expected_pods,
        disruptions_allowed=status.disruptions_allowed,
        disrupted_pods=dict(status.disrupted_pods) or None,
        observed_generation=generation,
        conditions=_condition(
            None, _disruption_condition(status.disruptions_allowed, generation), _whole_seconds(now)
        ),
    )
    return msgspec.structs.replace(pdb, status=fresh)


def fail_safe_status(pdb: PodDisruptionBudget, message: str, now: datetime) -> PodDisruptionBudget:
    """``failSafe``: the status as it was, but no disruptions allowed and DisruptionAllowed
    False with reason SyncFailed and the error as its message (observedGeneration the status's
    own, not the object's)."""
    old = pdb.status or PodDisruptionBudgetStatus()
    condition = Condition(
        type=DISRUPTION_ALLOWED,
        status="False",
        reason="SyncFailed",
        message=message,
        observed_generation=old.observed_generation,
    )
    status = msgspec.structs.replace(
        old,
        disruptions_allowed=0,
        current_healthy=old.current_healthy or 0,
        desired_healthy=old.desired_healthy or 0,
        expected_pods=old.expected_pods or 0,
        conditions=_condition(old.conditions, condition, _whole_seconds(now)),
    )
    return msgspec.structs.replace(pdb, status=status)
