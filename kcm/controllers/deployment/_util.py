"""Pure helpers over Deployments and ReplicaSets (Kubernetes' ``deployment/util``).

Nothing here does I/O: every function takes objects and returns values, so the rollout
arithmetic can be tested without a server.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import msgspec

from kcm.controllerkit import compute_template_hash, prune_empty
from kcm.models import to_dict
from kcm.models.apps_v1 import (
    Deployment,
    DeploymentCondition,
    DeploymentStatus,
    ReplicaSet,
    ReplicaSetCondition,
)
from kcm.models.core_v1 import PodTemplateSpec

__all__ = [
    "AVAILABLE",
    "DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY",
    "DEPRECATED_ROLLBACK_TO",
    "DESIRED_REPLICAS_ANNOTATION",
    "FAILED_RS_CREATE_REASON",
    "FOUND_NEW_RS_REASON",
    "LAST_APPLIED_CONFIG_ANNOTATION",
    "MAX_REPLICAS_ANNOTATION",
    "MAX_REV_HISTORY_LENGTH_IN_CHARS",
    "MINIMUM_REPLICAS_AVAILABLE",
    "MINIMUM_REPLICAS_UNAVAILABLE",
    "NEW_RS_AVAILABLE_REASON",
    "NEW_RS_REASON",
    "PAUSED_DEPLOY_REASON",
    "PROGRESSING",
    "REPLICA_FAILURE",
    "REPLICA_SET_UPDATED_REASON",
    "RESUMED_DEPLOY_REASON",
    "REVISION_ANNOTATION",
    "REVISION_HISTORY_ANNOTATION",
    "TIMED_OUT_REASON",
    "active_replica_sets",
    "available_replicas",
    "compute_hash",
    "deployment_complete",
    "deployment_progressing",
    "deployment_replicas",
    "deployment_timed_out",
    "desired_replicas_annotation",
    "equal_ignore_hash",
    "find_active_or_latest",
    "find_new_replica_set",
    "find_old_replica_sets",
    "get_condition",
    "has_progress_deadline",
    "has_revision_history_limit",
    "is_rolling_update",
    "is_saturated",
    "last_revision",
    "max_replicas_annotation",
    "max_revision",
    "max_surge",
    "max_unavailable",
    "new_condition",
    "remove_condition",
    "replica_set_to_deployment_condition",
    "resolve_fenceposts",
    "revision",
    "round_half_away",
    "rs_replicas",
    "scaled_value",
    "set_condition",
    "set_new_replica_set_annotations",
    "set_replicas_annotations",
    "sort_by_creation",
    "sort_by_revision",
    "sort_by_size_newer",
    "sort_by_size_older",
    "status_equal",
    "total_actual_replicas",
    "total_available_replicas",
    "total_ready_replicas",
    "total_replicas",
    "utc_now_seconds",
]

# -- names Kubernetes uses ------------------------------------------------------------------

DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY = "pod-template-hash"
REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
REVISION_HISTORY_ANNOTATION = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS_ANNOTATION = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS_ANNOTATION = "deployment.kubernetes.io/max-replicas"
DEPRECATED_ROLLBACK_TO = "deprecated.deployment.rollback.to"
LAST_APPLIED_CONFIG_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"
MAX_REV_HISTORY_LENGTH_IN_CHARS = 2000

PROGRESSING = "Progressing"
AVAILABLE = "Available"
REPLICA_FAILURE = "ReplicaFailure"

REPLICA_SET_UPDATED_REASON = "ReplicaSetUpdated"
FAILED_RS_CREATE_REASON = "ReplicaSetCreateError"
NEW_RS_REASON = "NewReplicaSetCreated"
FOUND_NEW_RS_REASON = "FoundNewReplicaSet"
NEW_RS_AVAILABLE_REASON = "NewReplicaSetAvailable"
TIMED_OUT_REASON = "ProgressDeadlineExceeded"
PAUSED_DEPLOY_REASON = "DeploymentPaused"
RESUMED_DEPLOY_REASON = "DeploymentResumed"
MINIMUM_REPLICAS_AVAILABLE = "MinimumReplicasAvailable"
MINIMUM_REPLICAS_UNAVAILABLE = "MinimumReplicasUnavailable"

_ANNOTATIONS_TO_SKIP = frozenset(
    {
        LAST_APPLIED_CONFIG_ANNOTATION,
        REVISION_ANNOTATION,
        REVISION_HISTORY_ANNOTATION,
        DESIRED_REPLICAS_ANNOTATION,
        MAX_REPLICAS_ANNOTATION,
        DEPRECATED_ROLLBACK_TO,
    }
)
_MAX_INT32 = 2**31 - 1
_PERCENT = re.compile(r"^(-?\d+)%$")


def utc_now_seconds(now: datetime) -> datetime:
    """``now`` in UTC, truncated to whole seconds (metav1.Time's precision), so a condition
    written and read back compares equal."""
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    return now.astimezone(UTC).replace(microsecond=0)


# -- int-or-percent arithmetic --------------------------------------------------------------


def scaled_value(value: int | str | None, total: int, *, round_up: bool) -> int:
    """Kubernetes' ``GetScaledValueFromIntOrPercent``: an int is itself, ``"25%"`` is 25 % of
    ``total`` rounded up or down, None is 0.

    Raises:
        ValueError: a string that is not ``<int>%``.
    """
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    match = _PERCENT.match(value.strip())
    if match is None:
        raise ValueError(
            f"invalid value for IntOrString: invalid type: string is not a percentage: {value!r}"
        )
    scaled = int(match.group(1)) * total / 100
    return math.ceil(scaled) if round_up else math.floor(scaled)


def resolve_fenceposts(
    surge: int | str | None, unavailable: int | str | None, desired: int
) -> tuple[int, int]:
    """maxSurge rounds up, maxUnavailable rounds down; if both come to 0, maxUnavailable is 1
    (validation forbids 0/0, but rounding down can produce it).

    Raises:
        ValueError: a malformed percentage.
    """
    max_surge_ = scaled_value(surge, desired, round_up=True)
    max_unavailable_ = scaled_value(unavailable, desired, round_up=False)
    if max_surge_ == 0 and max_unavailable_ == 0:
        max_unavailable_ = 1
    return max_surge_, max_unavailable_


def round_half_away(value: float) -> int:
    """Go's ``math.Round`` (halves away from zero), not Python's banker's rounding."""
    return math.floor(abs(value) + 0.5) * (1 if value >= 0 else -1)


# -- accessors ------------------------------------------------------------------------------


def deployment_replicas(d: Deployment) -> int:
    """``spec.replicas`` (the API defaults it to 1)."""
    spec = d.spec
    return 1 if spec is None or spec.replicas is None else spec.replicas


def rs_replicas(rs: ReplicaSet) -> int:
    """A ReplicaSet's ``spec.replicas`` (the API defaults it to 1)."""
    spec = rs.spec
    return 1 if spec is None or spec.replicas is None else spec.replicas


def available_replicas(rs: ReplicaSet) -> int:
    """``status.availableReplicas`` (0 when absent)."""
    return (rs.status.available_replicas or 0) if rs.status is not None else 0


def _actual(rs: ReplicaSet) -> int:
    return (rs.status.replicas or 0) if rs.status is not None else 0


def _ready(rs: ReplicaSet) -> int:
    return (rs.status.ready_replicas or 0) if rs.status is not None else 0


def total_replicas(rss: Iterable[ReplicaSet | None]) -> int:
    """Σ spec.replicas (``GetReplicaCountForReplicaSets``)."""
    return sum(rs_replicas(rs) for rs in rss if rs is not None)


def total_actual_replicas(rss: Iterable[ReplicaSet | None]) -> int:
    """Σ status.replicas."""
    return sum(_actual(rs) for rs in rss if rs is not None)


def total_ready_replicas(rss: Iterable[ReplicaSet | None]) -> int:
    """Σ status.readyReplicas."""
    return sum(_ready(rs) for rs in rss if rs is not None)


def total_available_replicas(rss: Iterable[ReplicaSet | None]) -> int:
    """Σ status.availableReplicas."""
    return sum(available_replicas(rs) for rs in rss if rs is not None)


def active_replica_sets(rss: Iterable[ReplicaSet | None]) -> list[ReplicaSet]:
    """The ReplicaSets with spec.replicas > 0 (``FilterActiveReplicaSets``)."""
    return [rs for rs in rss if rs is not None and rs_replicas(rs) > 0]


def is_rolling_update(d: Deployment) -> bool:
    """The strategy is RollingUpdate (the API's default)."""
    strategy = d.spec.strategy if d.spec is not None else None
    return strategy is None or strategy.type in (None, "RollingUpdate")


def _rolling_params(d: Deployment) -> tuple[int | str | None, int | str | None]:
    strategy = d.spec.strategy if d.spec is not None else None
    rolling = strategy.rolling_update if strategy is not None else None
    if rolling is None:
        return "25%", "25%"
    return rolling.max_surge, rolling.max_unavailable


def max_surge(d: Deployment) -> int:
    """Extra pods a RollingUpdate may run above spec.replicas (0 for Recreate)."""
    if not is_rolling_update(d):
        return 0
    surge, unavailable = _rolling_params(d)
    return resolve_fenceposts(surge, unavailable, deployment_replicas(d))[0]


def max_unavailable(d: Deployment) -> int:
    """Pods a RollingUpdate may have unavailable; capped at replicas, 0 for Recreate or 0
    replicas."""
    replicas = deployment_replicas(d)
    if not is_rolling_update(d) or replicas == 0:
        return 0
    surge, unavailable = _rolling_params(d)
    return min(resolve_fenceposts(surge, unavailable, replicas)[1], replicas)


def has_progress_deadline(d: Deployment) -> bool:
    """progressDeadlineSeconds is set and not MaxInt32."""
    seconds = d.spec.progress_deadline_seconds if d.spec is not None else None
    return seconds is not None and seconds != _MAX_INT32


def has_revision_history_limit(d: Deployment) -> bool:
    """revisionHistoryLimit is set and not MaxInt32."""
    limit = d.spec.revision_history_limit if d.spec is not None else None
    return limit is not None and limit != _MAX_INT32


def _int_annotation(rs: ReplicaSet, key: str) -> int | None:
    value = (rs.metadata.annotations or {}).get(key)
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return None


def desired_replicas_annotation(rs: ReplicaSet) -> int | None:
    """The ``deployment.kubernetes.io/desired-replicas`` annotation, or None."""
    return _int_annotation(rs, DESIRED_REPLICAS_ANNOTATION)


def max_replicas_annotation(rs: ReplicaSet) -> int | None:
    """The ``deployment.kubernetes.io/max-replicas`` annotation, or None."""
    return _int_annotation(rs, MAX_REPLICAS_ANNOTATION)


def revision(rs: ReplicaSet) -> int:
    """The ReplicaSet's ``deployment.kubernetes.io/revision`` (0 when absent or malformed)."""
    return _int_annotation(rs, REVISION_ANNOTATION) or 0


def max_revision(rss: Iterable[ReplicaSet | None]) -> int:
    """The highest revision among ``rss``."""
    return max((revision(rs) for rs in rss if rs is not None), default=0)


def last_revision(rss: Iterable[ReplicaSet | None]) -> int:
    """The second-highest revision (the one ``rollout undo`` goes back to), or 0."""
    top = second = 0
    for rs in rss:
        if rs is None:
            continue
        v = revision(rs)
        if v >= top:
            top, second = v, top
        elif v > second:
            second = v
    return second


# -- ordering (kubernetes/pkg/controller's sort helpers) ------------------------------------

_FAR_PAST = datetime.min.replace(tzinfo=UTC)


def _created(rs: ReplicaSet) -> datetime:
    ts = rs.metadata.creation_timestamp
    if ts is None:
        return _FAR_PAST
    return ts if ts.tzinfo is not None else ts.replace(tzinfo=UTC)


def sort_by_creation(rss: Iterable[ReplicaSet]) -> list[ReplicaSet]:
    """Oldest first; ties broken by name (``ReplicaSetsByCreationTimestamp``)."""
    return sorted(rss, key=lambda rs: (_created(rs), rs.metadata.name or ""))


def sort_by_size_older(rss: Iterable[ReplicaSet]) -> list[ReplicaSet]:
    """Largest first; equal sizes oldest first (``ReplicaSetsBySizeOlder``, scaling down)."""
    return sorted(
        sort_by_creation(rss), key=lambda rs: -rs_replicas(rs)
    )  # stable: creation order within a size


def sort_by_size_newer(rss: Iterable[ReplicaSet]) -> list[ReplicaSet]:
    """Largest first; equal sizes newest first (``ReplicaSetsBySizeNewer``, scaling up)."""
    return sorted(reversed(sort_by_creation(rss)), key=lambda rs: -rs_replicas(rs))


def sort_by_revision(rss: Iterable[ReplicaSet]) -> list[ReplicaSet]:
    """Lowest revision first; ties by creation (``ReplicaSetsByRevision``)."""
    return sorted(sort_by_creation(rss), key=revision)


# -- template identity ----------------------------------------------------------------------


def _prune(value: Any) -> Any:
    """Drop None, empty maps and empty lists (:func:`kcm.controllerkit.prune_empty`)."""
    return prune_empty(value)


def _template_dict(template: PodTemplateSpec | None, *, drop_hash: bool) -> dict[str, Any]:
    data: dict[str, Any] = to_dict(template) if template is not None else {}
    if drop_hash:
        labels = (data.get("metadata") or {}).get("labels")
        if isinstance(labels, dict):
            labels.pop(DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY, None)
    pruned: dict[str, Any] = _prune(data)
    return pruned


def compute_hash(template: PodTemplateSpec | None, collision_count: int | None) -> str:
    """The ``pod-template-hash`` of a template (:func:`kcm.controllerkit.compute_template_hash`:
    FNV-1a 32 over its canonical JSON and the collision count). The values differ from Go's
    (Go hashes a deep-print of the struct), but the scheme is the same: stable for a template,
    different when ``collision_count`` changes.
    """
    return compute_template_hash(template, collision_count)


def _without_hash(template: PodTemplateSpec | None) -> PodTemplateSpec | None:
    """``template`` without the ``pod-template-hash`` label, for a quick struct comparison
    (equal structs are equal templates; unequal ones may still be, nil against empty)."""
    meta = template.metadata if template is not None else None
    labels = meta.labels if meta is not None else None
    if template is None or meta is None or not labels:
        return template
    if DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY not in labels:
        return template
    rest = {k: v for k, v in labels.items() if k != DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY}
    return msgspec.structs.replace(
        template, metadata=msgspec.structs.replace(meta, labels=rest or None)
    )


def equal_ignore_hash(a: PodTemplateSpec | None, b: PodTemplateSpec | None) -> bool:
    """The two templates are equal apart from the ``pod-template-hash`` label."""
    if _without_hash(a) == _without_hash(b):
        return True
    return _template_dict(a, drop_hash=True) == _template_dict(b, drop_hash=True)


def find_new_replica_set(d: Deployment, rss: Sequence[ReplicaSet]) -> ReplicaSet | None:
    """The oldest ReplicaSet whose template equals the Deployment's (ignoring the hash).

    The structs are compared first (a ReplicaSet made from the template is the template
    plus its hash label), the pruned dicts only when they differ."""
    template = d.spec.template if d.spec is not None else None
    want_struct = _without_hash(template)
    want: dict[str, Any] | None = None
    for rs in sort_by_creation(rss):
        theirs = rs.spec.template if rs.spec is not None else None
        if _without_hash(theirs) == want_struct:
            return rs
        if want is None:
            want = _template_dict(template, drop_hash=True)
        if _template_dict(theirs, drop_hash=True) == want:
            return rs
    return None


def find_old_replica_sets(
    d: Deployment, rss: Sequence[ReplicaSet]
) -> tuple[list[ReplicaSet], list[ReplicaSet]]:
    """(old ReplicaSets with replicas > 0, every old ReplicaSet); "old" is all but the new."""
    new = find_new_replica_set(d, rss)
    all_old = [rs for rs in rss if new is None or rs.metadata.uid != new.metadata.uid]
    return [rs for rs in all_old if rs_replicas(rs) != 0], all_old


def find_active_or_latest(
    new_rs: ReplicaSet | None, old_rss: Sequence[ReplicaSet]
) -> ReplicaSet | None:
    """The only active ReplicaSet; the newest one (the new RS first) when none is active;
    None when several are active."""
    if new_rs is None and not old_rss:
        return None
    newest_first = list(reversed(sort_by_creation(old_rss)))
    active = active_replica_sets([*newest_first, new_rs])
    if not active:
        return new_rs if new_rs is not None else newest_first[0]
    return active[0] if len(active) == 1 else None


def is_saturated(d: Deployment, rs: ReplicaSet | None) -> bool:
    """The ReplicaSet runs the whole Deployment: spec, desired annotation and available
    replicas all equal spec.replicas."""
    if rs is None:
        return False
    desired = desired_replicas_annotation(rs)
    replicas = deployment_replicas(d)
    return (
        desired is not None
        and rs_replicas(rs) == replicas
        and desired == replicas
        and available_replicas(rs) == replicas
    )


# -- annotations ----------------------------------------------------------------------------


def set_replicas_annotations(annotations: dict[str, str], desired: int, max_: int) -> bool:
    """Write the desired-replicas and max-replicas annotations into ``annotations``; True if
    anything changed."""
    changed = False
    for key, value in ((DESIRED_REPLICAS_ANNOTATION, desired), (MAX_REPLICAS_ANNOTATION, max_)):
        if annotations.get(key) != str(value):
            annotations[key] = str(value)
            changed = True
    return changed


def set_new_replica_set_annotations(
    d: Deployment,
    annotations: dict[str, str],
    new_revision: int,
    *,
    exists: bool,
    history_limit_chars: int = MAX_REV_HISTORY_LENGTH_IN_CHARS,
) -> bool:
    """Kubernetes' ``SetNewReplicaSetAnnotations`` on a mutable annotation map.

    Copies the Deployment's annotations (except the skipped ones), raises the revision to
    ``new_revision`` if it is lower (appending the old revision to ``revision-history``,
    capped at ``history_limit_chars``), and for a ReplicaSet about to be created sets the
    desired/max-replicas annotations.

    Returns:
        True if ``annotations`` changed.
    """
    changed = False
    for key, value in (d.metadata.annotations or {}).items():
        if key in _ANNOTATIONS_TO_SKIP or annotations.get(key) == value:
            continue
        annotations[key] = value
        changed = True
    old = annotations.get(REVISION_ANNOTATION)
    try:
        old_int = int(old) if old is not None and old != "" else 0
    except ValueError:
        return changed
    if old_int < new_revision:
        annotations[REVISION_ANNOTATION] = str(new_revision)
        changed = True
        if old is not None:
            history = annotations.get(REVISION_HISTORY_ANNOTATION, "")
            if not history:
                annotations[REVISION_HISTORY_ANNOTATION] = old
            else:
                revisions = history.split(",")
                total = len(history) + len(old) + 1
                start = 0
                while total > history_limit_chars and start < len(revisions):
                    total -= len(revisions[start]) + 1
                    start += 1
                if total <= history_limit_chars:
                    annotations[REVISION_HISTORY_ANNOTATION] = ",".join([*revisions[start:], old])
    if not exists:
        replicas = deployment_replicas(d)
        if set_replicas_annotations(annotations, replicas, replicas + max_surge(d)):
            changed = True
    return changed


def rollback_annotations(d: Deployment, rs: ReplicaSet) -> dict[str, str]:
    """The Deployment's annotations after a rollback to ``rs``: its skipped annotations kept,
    every other one taken from ``rs`` (``SetDeploymentAnnotationsTo``)."""
    kept = {k: v for k, v in (d.metadata.annotations or {}).items() if k in _ANNOTATIONS_TO_SKIP}
    for key, value in (rs.metadata.annotations or {}).items():
        if key not in _ANNOTATIONS_TO_SKIP:
            kept[key] = value
    return kept


# -- conditions -----------------------------------------------------------------------------


def new_condition(
    type_: str, status: str, reason: str, message: str, now: datetime
) -> DeploymentCondition:
    """A condition whose both timestamps are ``now`` (in whole seconds)."""
    ts = utc_now_seconds(now)
    return DeploymentCondition(
        type=type_,
        status=status,
        reason=reason,
        message=message,
        last_update_time=ts,
        last_transition_time=ts,
    )


def get_condition(
    conditions: Iterable[DeploymentCondition] | None, type_: str
) -> DeploymentCondition | None:
    """The condition of that type, or None."""
    for cond in conditions or ():
        if cond.type == type_:
            return cond
    return None


def set_condition(
    conditions: Sequence[DeploymentCondition] | None, cond: DeploymentCondition
) -> list[DeploymentCondition]:
    """Apps' condition rule: the same status and reason change nothing; the same status with
    another reason keeps lastTransitionTime; the new condition goes last."""
    current = get_condition(conditions, cond.type or "")
    if current is not None and current.status == cond.status and current.reason == cond.reason:
        return list(conditions or [])
    if current is not None and current.status == cond.status:
        cond = msgspec.structs.replace(cond, last_transition_time=current.last_transition_time)
    return [*remove_condition(conditions, cond.type or ""), cond]


def remove_condition(
    conditions: Sequence[DeploymentCondition] | None, type_: str
) -> list[DeploymentCondition]:
    """``conditions`` without the condition of that type."""
    return [c for c in conditions or () if c.type != type_]


def replica_set_to_deployment_condition(cond: ReplicaSetCondition) -> DeploymentCondition:
    """A ReplicaSet condition as a Deployment condition (both timestamps = its transition)."""
    return DeploymentCondition(
        type=cond.type,
        status=cond.status,
        reason=cond.reason,
        message=cond.message,
        last_update_time=cond.last_transition_time,
        last_transition_time=cond.last_transition_time,
    )


# -- rollout state --------------------------------------------------------------------------


def _n(value: int | None) -> int:
    return value or 0


def deployment_complete(d: Deployment, status: DeploymentStatus) -> bool:
    """Every replica is updated and available, and the status describes this generation."""
    replicas = deployment_replicas(d)
    return (
        _n(status.updated_replicas) == replicas
        and _n(status.replicas) == replicas
        and _n(status.available_replicas) == replicas
        and _n(status.observed_generation) >= _n(d.metadata.generation)
    )


def deployment_progressing(d: Deployment, new: DeploymentStatus) -> bool:
    """Anything moved since ``d.status``: more updated, fewer old, more ready or available."""
    old = d.status or DeploymentStatus()
    old_old = _n(old.replicas) - _n(old.updated_replicas)
    new_old = _n(new.replicas) - _n(new.updated_replicas)
    return (
        _n(new.updated_replicas) > _n(old.updated_replicas)
        or new_old < old_old
        or _n(new.ready_replicas) > _n(old.ready_replicas)
        or _n(new.available_replicas) > _n(old.available_replicas)
    )


def deployment_timed_out(d: Deployment, status: DeploymentStatus, now: datetime) -> bool:
    """The Progressing condition was last updated more than progressDeadlineSeconds before
    ``now``. A completed rollout (``NewReplicaSetAvailable``) never times out; one already
    marked ``ProgressDeadlineExceeded`` stays timed out."""
    if not has_progress_deadline(d):
        return False
    cond = get_condition(status.conditions, PROGRESSING)
    if cond is None or cond.reason == NEW_RS_AVAILABLE_REASON:
        return False
    if cond.reason == TIMED_OUT_REASON:
        return True
    if cond.last_update_time is None:
        return False
    deadline = d.spec.progress_deadline_seconds if d.spec is not None else None
    from_ = cond.last_update_time
    if from_.tzinfo is None:
        from_ = from_.replace(tzinfo=UTC)
    return (now - from_).total_seconds() > _n(deadline)


def status_equal(a: DeploymentStatus | None, b: DeploymentStatus | None) -> bool:
    """Equal as the API stores them (absent, 0 and empty are the same)."""
    if a == b:  # the usual case: a sync that changes nothing
        return True

    def norm(s: DeploymentStatus | None) -> Any:
        data = to_dict(s) if s is not None else {}
        return {k: v for k, v in _prune(data).items() if v != 0}

    return bool(norm(a) == norm(b))


def labels_with_hash(labels: Mapping[str, str] | None, value: str) -> dict[str, str]:
    """A copy of ``labels`` with ``pod-template-hash=value``."""
    return {**(labels or {}), DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY: value}
