"""The controller kit: what kube-controller-manager's controllers share.

controller-runtime (:mod:`kcm.runtime`) runs reconcilers; the built-in workload controllers
also share a body of Kubernetes-specific helpers (``pkg/controller`` in Go:
``controller_utils.go``, ``controller_ref_manager.go``, ``history``, ``podutil``). They live
here, so that a controller never imports another and a user's controller can use the same
pieces. The families:

* **Claiming children**: :class:`ControllerRefManager` adopts matching orphans and releases
  children that stopped matching; :func:`recheck_deletion_timestamp` is its live owner check.
* **Expectations**: :class:`ControllerExpectations`, :class:`UIDTrackingControllerExpectations`
  remember the creates and deletes a controller issued until its informer shows them.
* **Pods**: predicates (:func:`is_pod_active`, :func:`is_pod_ready`, :func:`is_pod_available`),
  pods from an owner's template (:func:`pod_from_template`, :func:`pod_name_prefix`), the
  scale-down order (:func:`rank_pods_for_deletion`, :func:`pods_to_delete`,
  ``pod-deletion-cost``), and :func:`slow_start_batch` for creating many.
* **Keeping N pods of an owner**: :class:`ReplicaManager` over a :class:`ReplicaKind` (the
  ReplicaSet and ReplicationController controllers, or your own kind) and its status
  (:func:`calculate_replica_status`).
* **ControllerRevision history**: :class:`History` and the pure helpers around it
  (:func:`new_controller_revision`, :func:`hash_controller_revision`, ...), for controllers that
  keep revisions of their template (DaemonSet, StatefulSet); :func:`template_patch` and
  :func:`template_from_patch` are a pod template as revision data, and back.
* **Small shared answers**: :func:`is_namespace_terminating` (a create refused by a
  terminating namespace), :func:`finished_condition`/:func:`is_finished` (Jobs),
  :func:`safe_encode_string` (hashes as text), and :func:`root_ca`/:func:`read_root_ca` (the
  ``--root-ca-file`` bundle the service-account controllers hand out).

See docs/controllerkit.md.
"""

from ._controller_ref_manager import ControllerRefManager as ControllerRefManager
from ._controller_ref_manager import LabelMatcher as LabelMatcher
from ._controller_ref_manager import recheck_deletion_timestamp as recheck_deletion_timestamp
from ._expectations import EXPECTATIONS_TIMEOUT as EXPECTATIONS_TIMEOUT
from ._expectations import ControllerExpectations as ControllerExpectations
from ._expectations import UIDTrackingControllerExpectations as UIDTrackingControllerExpectations
from ._history import CONTROLLER_REVISION_HASH_LABEL as CONTROLLER_REVISION_HASH_LABEL
from ._history import History as History
from ._history import controller_revision_name as controller_revision_name
from ._history import equal_revision as equal_revision
from ._history import find_equal_revisions as find_equal_revisions
from ._history import hash_controller_revision as hash_controller_revision
from ._history import new_controller_revision as new_controller_revision
from ._history import sort_controller_revisions as sort_controller_revisions
from ._job_status import finished_condition as finished_condition
from ._job_status import is_finished as is_finished
from ._namespaces import is_namespace_terminating as is_namespace_terminating
from ._pod_predicates import is_pod_active as is_pod_active
from ._pod_predicates import is_pod_available as is_pod_available
from ._pod_predicates import is_pod_ready as is_pod_ready
from ._pod_predicates import pod_ready_condition as pod_ready_condition
from ._pod_ranking import POD_DELETION_COST_ANNOTATION as POD_DELETION_COST_ANNOTATION
from ._pod_ranking import compare_pods_for_deletion as compare_pods_for_deletion
from ._pod_ranking import pod_deletion_cost as pod_deletion_cost
from ._pod_ranking import pods_to_delete as pods_to_delete
from ._pod_ranking import rank_pods_for_deletion as rank_pods_for_deletion
from ._pod_template import pod_from_template as pod_from_template
from ._pod_template import pod_name_prefix as pod_name_prefix
from ._replica_manager import BURST_REPLICAS as BURST_REPLICAS
from ._replica_manager import ReplicaKind as ReplicaKind
from ._replica_manager import ReplicaManager as ReplicaManager
from ._replica_status import REPLICA_FAILURE as REPLICA_FAILURE
from ._replica_status import calculate_replica_status as calculate_replica_status
from ._replica_status import desired_replicas as desired_replicas
from ._root_ca import read_root_ca as read_root_ca
from ._root_ca import root_ca as root_ca
from ._safe_encoding import SAFE_ALPHABET as SAFE_ALPHABET
from ._safe_encoding import safe_encode_string as safe_encode_string
from ._slow_start import SLOW_START_INITIAL_BATCH_SIZE as SLOW_START_INITIAL_BATCH_SIZE
from ._slow_start import slow_start_batch as slow_start_batch
from ._template_revision import template_from_patch as template_from_patch
from ._template_revision import template_patch as template_patch

__all__ = [
    "BURST_REPLICAS",
    "CONTROLLER_REVISION_HASH_LABEL",
    "EXPECTATIONS_TIMEOUT",
    "POD_DELETION_COST_ANNOTATION",
    "REPLICA_FAILURE",
    "SAFE_ALPHABET",
    "SLOW_START_INITIAL_BATCH_SIZE",
    "ControllerExpectations",
    "ControllerRefManager",
    "History",
    "LabelMatcher",
    "ReplicaKind",
    "ReplicaManager",
    "UIDTrackingControllerExpectations",
    "calculate_replica_status",
    "compare_pods_for_deletion",
    "controller_revision_name",
    "desired_replicas",
    "equal_revision",
    "find_equal_revisions",
    "finished_condition",
    "hash_controller_revision",
    "is_finished",
    "is_namespace_terminating",
    "is_pod_active",
    "is_pod_available",
    "is_pod_ready",
    "new_controller_revision",
    "pod_deletion_cost",
    "pod_from_template",
    "pod_name_prefix",
    "pod_ready_condition",
    "pods_to_delete",
    "rank_pods_for_deletion",
    "read_root_ca",
    "recheck_deletion_timestamp",
    "root_ca",
    "safe_encode_string",
    "slow_start_batch",
    "sort_controller_revisions",
    "template_from_patch",
    "template_patch",
]
