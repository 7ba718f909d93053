"""The DaemonSet controller: one pod of each DaemonSet on every node that should run it
(kube-controller-manager's ``daemonset``).

Placement by the template's node selector, required node affinity and the node's taints (with
the tolerations every daemon pod gets), pods pinned to their node by node affinity for the
scheduler to bind, slow-start creates, a backoff for failed pods, RollingUpdate with
maxUnavailable and maxSurge or OnDelete, ControllerRevisions for ``kubectl rollout
history/undo``, and the status ``kubectl rollout status`` reads. See docs/controllers.md.
"""

from __future__ import annotations

from kcm.controllers import CONTROLLERS, add_controller
from kcm.runtime import Manager

from ._backoff import FAILED_POD_BACKOFF_INITIAL as FAILED_POD_BACKOFF_INITIAL
from ._backoff import FAILED_POD_BACKOFF_MAX as FAILED_POD_BACKOFF_MAX
from ._backoff import FailedPodBackoff as FailedPodBackoff
from ._controller import BURST_REPLICAS as BURST_REPLICAS
from ._controller import DEFAULT_WORKERS as DEFAULT_WORKERS
from ._controller import FAILED_DAEMON_POD as FAILED_DAEMON_POD
from ._controller import SELECTING_ALL as SELECTING_ALL
from ._controller import DaemonSetController as DaemonSetController
from ._events import should_ignore_node_update as should_ignore_node_update
from ._placement import DAEMON_POD_TOLERATIONS as DAEMON_POD_TOLERATIONS
from ._placement import Placement as Placement
from ._placement import add_daemon_pod_tolerations as add_daemon_pod_tolerations
from ._placement import new_daemon_pod as new_daemon_pod
from ._placement import node_should_run_daemon_pod as node_should_run_daemon_pod
from ._placement import replace_node_name_affinity as replace_node_name_affinity
from ._placement import target_node_name as target_node_name
from ._pods import CONTROLLER_REVISION_HASH_LABEL as CONTROLLER_REVISION_HASH_LABEL
from ._pods import TEMPLATE_GENERATION_ANNOTATION as TEMPLATE_GENERATION_ANNOTATION
from ._pods import TEMPLATE_GENERATION_LABEL as TEMPLATE_GENERATION_LABEL
from ._pods import daemon_pod_template as daemon_pod_template
from ._pods import is_pod_updated as is_pod_updated
from ._pods import sort_daemon_pods as sort_daemon_pods
from ._pods import template_generation as template_generation
from ._revisions import matches_revision as matches_revision
from ._revisions import new_revision as new_revision
from ._revisions import revision_data as revision_data
from ._rollout import RollingUpdatePlan as RollingUpdatePlan
from ._rollout import allows_surge as allows_surge
from ._rollout import find_updated_pods_on_node as find_updated_pods_on_node
from ._rollout import max_surge_and_unavailable as max_surge_and_unavailable
from ._rollout import plan_rolling_update as plan_rolling_update
from ._rollout import surge_count as surge_count
from ._rollout import unavailable_count as unavailable_count
from ._rollout import with_server_defaults as with_server_defaults
from ._status import calculate_status as calculate_status

NAME = "daemonset"
"""kube-controller-manager's name for this controller."""

HELP = CONTROLLERS[NAME].help
"""One line for ``kcm --help`` (the registry's)."""


def add_to_manager(manager: Manager, *, workers: int = DEFAULT_WORKERS) -> None:
    """Build the DaemonSet controller from the manager's client, informer factory, clock and
    metrics registry, with the ``daemonset-controller`` event recorder, and add it
    (leader-elected)."""
    add_controller(manager, NAME, DaemonSetController, workers=workers)


__all__ = [
    "BURST_REPLICAS",
    "CONTROLLER_REVISION_HASH_LABEL",
    "DAEMON_POD_TOLERATIONS",
    "DEFAULT_WORKERS",
    "FAILED_DAEMON_POD",
    "FAILED_POD_BACKOFF_INITIAL",
    "FAILED_POD_BACKOFF_MAX",
    "HELP",
    "NAME",
    "SELECTING_ALL",
    "TEMPLATE_GENERATION_ANNOTATION",
    "TEMPLATE_GENERATION_LABEL",
    "DaemonSetController",
    "FailedPodBackoff",
    "Placement",
    "RollingUpdatePlan",
    "add_daemon_pod_tolerations",
    "add_to_manager",
    "allows_surge",
    "calculate_status",
    "daemon_pod_template",
    "find_updated_pods_on_node",
    "is_pod_updated",
    "matches_revision",
    "max_surge_and_unavailable",
    "new_daemon_pod",
    "new_revision",
    "node_should_run_daemon_pod",
    "plan_rolling_update",
    "replace_node_name_affinity",
    "revision_data",
    "should_ignore_node_update",
    "sort_daemon_pods",
    "surge_count",
    "target_node_name",
    "template_generation",
    "unavailable_count",
    "with_server_defaults",
]
