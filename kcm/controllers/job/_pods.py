"""What the Job controller needs to know about a pod beyond the ReplicaSet package's
``is_pod_active``/``is_pod_ready``: terminating, failed, its completion index, which one to
delete first, and what the pod failure policy says about a failed pod."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kcm.controllerkit import is_pod_ready
from kcm.models.batch_v1 import Job, PodFailurePolicy, PodFailurePolicyOnExitCodesRequirement
from kcm.models.core_v1 import ContainerStatus, Pod, PodCondition

__all__ = [
    "COMPLETION_INDEX_KEY",
    "JOB_TRACKING_FINALIZER",
    "FailurePolicyVerdict",
    "completion_index",
    "deletion_rank",
    "has_tracking_finalizer",
    "is_failed",
    "is_terminating",
    "match_pod_failure_policy",
    "only_replace_failed_pods",
    "past_backoff_limit_on_failure",
]

JOB_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
"""The pod finalizer that keeps a finished pod around until the Job has counted it."""

COMPLETION_INDEX_KEY = "batch.kubernetes.io/job-completion-index"
"""Annotation (and label) carrying an Indexed Job pod's completion index."""


def _phase(pod: Pod) -> str | None:
    return pod.status.phase if pod.status is not None else None


def is_terminating(pod: Pod) -> bool:
    """Being deleted but not yet in a terminal phase."""
    return pod.metadata.deletion_timestamp is not None and _phase(pod) not in (
        "Succeeded",
        "Failed",
    )


def only_replace_failed_pods(job: Job) -> bool:
    """``podReplacementPolicy: Failed`` (the default when a pod failure policy is set): a
    deleted pod is not a failure until it reaches phase Failed."""
    spec = job.spec
    if spec is None:
        return False
    if spec.pod_replacement_policy is not None:
        return spec.pod_replacement_policy == "Failed"
    return spec.pod_failure_policy is not None


def is_failed(pod: Pod, job: Job) -> bool:
    """Phase Failed, or (unless only failed pods are replaced) deleted before it succeeded:
    an orphaned pod that never reaches Failed still counts as a failure."""
    if _phase(pod) == "Failed":
        return True
    if only_replace_failed_pods(job):
        return False
    return pod.metadata.deletion_timestamp is not None and _phase(pod) != "Succeeded"


def past_backoff_limit_on_failure(job: Job, pods: Iterable[Pod]) -> bool:
    """With ``restartPolicy: OnFailure`` failed containers restart in place and no pod
    fails, so the backoff limit counts restarts: the container restart counts (init
    containers included) of the Job's Pending and Running pods add up to ``backoffLimit``
    (any restart when it is 0). kube's ``pastBackoffLimitOnFailure``."""
    spec = job.spec
    template = spec.template if spec is not None else None
    pod_spec = template.spec if template is not None else None
    if pod_spec is None or pod_spec.restart_policy != "OnFailure":
        return False
    restarts = 0
    for pod in pods:
        if _phase(pod) not in ("Running", "Pending") or pod.status is None:
            continue
        for cs in (
            *(pod.status.init_container_statuses or ()),
            *(pod.status.container_statuses or ()),
        ):
            restarts += cs.restart_count or 0
    limit = spec.backoff_limit if spec is not None and spec.backoff_limit is not None else 6
    if limit == 0:
        return restarts > 0
    return restarts >= limit


def has_tracking_finalizer(pod: Pod) -> bool:
    return JOB_TRACKING_FINALIZER in (pod.metadata.finalizers or ())


def completion_index(pod: Pod) -> int | None:
    """The pod's completion index from its annotation, or None if missing or malformed."""
    value = (pod.metadata.annotations or {}).get(COMPLETION_INDEX_KEY)
    if value is None:
        return None
    try:
        index = int(value)
    except ValueError:
        return None
    return index if index >= 0 else None


_PHASE_RANK = {"Pending": 0, "Unknown": 1, "Running": 2}


def deletion_rank(pod: Pod) -> tuple[int, int, int, float]:
    """Sort key: pods to delete first sort first (client-go ``ActivePods`` ranking):
    unscheduled, then pending, then not ready, then the newest."""
    spec = pod.spec
    created = pod.metadata.creation_timestamp
    return (
        0 if spec is None or not spec.node_name else 1,
        _PHASE_RANK.get(_phase(pod) or "Pending", 0),
        1 if is_pod_ready(pod) else 0,
        -(created.timestamp() if created is not None else 0.0),
    )


@dataclass(frozen=True, slots=True)
class FailurePolicyVerdict:
    """What the pod failure policy says about one failed pod.

    Attributes:
        action: the matching rule's action (``FailJob``, ``Ignore``, ``Count``,
            ``FailIndex``), or None when no rule matched (count the failure).
        message: for ``FailJob``, the message of the Job's failure condition.
    """

    action: str | None
    message: str | None = None

    @property
    def counts(self) -> bool:
        """Whether the failure counts towards ``status.failed`` and the backoff limit."""
        return self.action != "Ignore"


def _match_exit_codes(
    pod: Pod, requirement: PodFailurePolicyOnExitCodesRequirement
) -> ContainerStatus | None:
    status = pod.status
    if status is None:
        return None
    values = set(requirement.values or ())
    statuses: list[ContainerStatus] = [
        *(status.init_container_statuses or ()),
        *(status.container_statuses or ()),
    ]
    for cs in statuses:
        terminated = cs.state.terminated if cs.state is not None else None
        if terminated is None or not terminated.exit_code:
            continue  # exit code 0 never matches
        if requirement.container_name and requirement.container_name != cs.name:
            continue
        matched = terminated.exit_code in values
        if (requirement.operator == "In") == matched:
            return cs
    return None


def _match_conditions(pod: Pod, patterns: list[object]) -> PodCondition | None:
    status = pod.status
    conditions = (status.conditions if status is not None else None) or ()
    for pattern in patterns:
        want_type = getattr(pattern, "type", None)
        want_status = getattr(pattern, "status", None) or "True"
        for cond in conditions:
            if cond.type == want_type and cond.status == want_status:
                return cond
    return None


def match_pod_failure_policy(policy: PodFailurePolicy | None, pod: Pod) -> FailurePolicyVerdict:
    """Evaluate the rules in order; the first that matches the failed pod decides."""
    if policy is None:
        return FailurePolicyVerdict(None)
    where = f"{pod.metadata.namespace}/{pod.metadata.name}"
    for index, rule in enumerate(policy.rules or ()):
        action = rule.action
        if rule.on_exit_codes is not None:
            cs = _match_exit_codes(pod, rule.on_exit_codes)
            if cs is None:
                continue
            if action == "FailJob":
                code = cs.state.terminated.exit_code if cs.state and cs.state.terminated else None
                return FailurePolicyVerdict(
                    action,
                    f"Container {cs.name} for pod {where} failed with exit code {code} "
                    f"matching FailJob rule at index {index}",
                )
            return FailurePolicyVerdict(action)
        if rule.on_pod_conditions:
            cond = _match_conditions(pod, list(rule.on_pod_conditions))
            if cond is None:
                continue
            if action == "FailJob":
                return FailurePolicyVerdict(
                    action,
                    f"Pod {where} has condition {cond.type} matching FailJob rule at index {index}",
                )
            return FailurePolicyVerdict(action)
    return FailurePolicyVerdict(None)
