"""The Deployment controller: rolls Deployments out through ReplicaSets.

kube-controller-manager's ``deployment`` controller (§1): RollingUpdate
(maxSurge/maxUnavailable) and Recreate, the ``pod-template-hash`` label and ReplicaSet names,
revisions and revision history, revisionHistoryLimit cleanup, rollback, pause/resume,
proportional scaling, the progress deadline with ``Progressing``/``Available`` conditions.
The arithmetic is pure (:mod:`._rollout`, :mod:`._util`) and re-exported for testing and
tools. See docs/controllers.md#deployment.
"""

from __future__ import annotations

from kcm.controllers import add_controller
from kcm.runtime import Manager

from ._controller import DEFAULT_WORKERS as DEFAULT_WORKERS
from ._controller import MAX_RETRIES as MAX_RETRIES
from ._controller import STALE_CACHE_MAX_WAIT as STALE_CACHE_MAX_WAIT
from ._controller import DeploymentController as DeploymentController
from ._rollout import ScaleStep as ScaleStep
from ._rollout import calculate_status as calculate_status
from ._rollout import cleanup_candidates as cleanup_candidates
from ._rollout import max_scaled_down as max_scaled_down
from ._rollout import new_rs_new_replicas as new_rs_new_replicas
from ._rollout import old_pods_running as old_pods_running
from ._rollout import plan_cleanup_unhealthy as plan_cleanup_unhealthy
from ._rollout import plan_new_replica_set as plan_new_replica_set
from ._rollout import plan_proportional_scale as plan_proportional_scale
from ._rollout import plan_scale as plan_scale
from ._rollout import plan_scale_down_old as plan_scale_down_old
from ._rollout import rollout_status as rollout_status
from ._rollout import stuck_requeue_after as stuck_requeue_after
from ._util import DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY as DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY
from ._util import DESIRED_REPLICAS_ANNOTATION as DESIRED_REPLICAS_ANNOTATION
from ._util import MAX_REPLICAS_ANNOTATION as MAX_REPLICAS_ANNOTATION
from ._util import REVISION_ANNOTATION as REVISION_ANNOTATION
from ._util import REVISION_HISTORY_ANNOTATION as REVISION_HISTORY_ANNOTATION
from ._util import compute_hash as compute_hash
from ._util import equal_ignore_hash as equal_ignore_hash
from ._util import find_new_replica_set as find_new_replica_set
from ._util import find_old_replica_sets as find_old_replica_sets
from ._util import max_surge as max_surge
from ._util import max_unavailable as max_unavailable
from ._util import resolve_fenceposts as resolve_fenceposts
from ._util import set_new_replica_set_annotations as set_new_replica_set_annotations

NAME = "deployment"
"""kube-controller-manager's name for this controller."""

HELP = "Rolls Deployments out through ReplicaSets (rolling update, recreate, rollback)."


def add_to_manager(manager: Manager, *, workers: int = DEFAULT_WORKERS) -> None:
    """Build the Deployment controller from the manager's client, informer factory, clock and
    metrics registry, with the ``deployment-controller`` event recorder, and add it
    (leader-elected)."""
    add_controller(manager, NAME, DeploymentController, workers=workers)


__all__ = [
    "DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY",
    "DEFAULT_WORKERS",
    "DESIRED_REPLICAS_ANNOTATION",
    "HELP",
    "MAX_REPLICAS_ANNOTATION",
    "MAX_RETRIES",
    "NAME",
    "REVISION_ANNOTATION",
    "REVISION_HISTORY_ANNOTATION",
    "STALE_CACHE_MAX_WAIT",
    "DeploymentController",
    "ScaleStep",
    "add_to_manager",
    "calculate_status",
    "cleanup_candidates",
    "compute_hash",
    "equal_ignore_hash",
    "find_new_replica_set",
    "find_old_replica_sets",
    "max_scaled_down",
    "max_surge",
    "max_unavailable",
    "new_rs_new_replicas",
    "old_pods_running",
    "plan_cleanup_unhealthy",
    "plan_new_replica_set",
    "plan_proportional_scale",
    "plan_scale",
    "plan_scale_down_old",
    "resolve_fenceposts",
    "rollout_status",
    "set_new_replica_set_annotations",
    "stuck_requeue_after",
]
