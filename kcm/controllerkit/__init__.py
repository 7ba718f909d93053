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
  keep revisions of their template (DaemonSet, StatefulSet).
* **Placing pods on nodes**: taints against tolerations (:func:`tolerates_taint`,
  :func:`untolerated_taint`, :func:`add_or_update_toleration`) and node affinity
  (:func:`required_node_affinity_matches`, :func:`node_selector_matches`), for the DaemonSet
  controller and schedulers; :func:`compute_template_hash`, the pod template hash of Deployments
  and DaemonSets.
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
from ._node_affinity import NODE_NAME_FIELD as NODE_NAME_FIELD
from ._node_affinity import node_selector_matches as node_selector_matches
from ._node_affinity import node_selector_term_matches as node_selector_term_matches
from ._node_affinity import required_node_affinity_matches as required_node_affinity_matches
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
from ._taints import NO_EXECUTE as NO_EXECUTE
from ._taints import NO_SCHEDULE as NO_SCHEDULE
from ._taints import PREFER_NO_SCHEDULE as PREFER_NO_SCHEDULE
from ._taints import TAINT_NODE_DISK_PRESSURE as TAINT_NODE_DISK_PRESSURE
from ._taints import TAINT_NODE_MEMORY_PRESSURE as TAINT_NODE_MEMORY_PRESSURE
from ._taints import TAINT_NODE_NETWORK_UNAVAILABLE as TAINT_NODE_NETWORK_UNAVAILABLE
from ._taints import TAINT_NODE_NOT_READY as TAINT_NODE_NOT_READY
from ._taints import TAINT_NODE_PID_PRESSURE as TAINT_NODE_PID_PRESSURE
from ._taints import TAINT_NODE_UNREACHABLE as TAINT_NODE_UNREACHABLE
from ._taints import TAINT_NODE_UNSCHEDULABLE as TAINT_NODE_UNSCHEDULABLE
from ._taints import add_or_update_toleration as add_or_update_toleration
from ._taints import taint_text as taint_text
from ._taints import tolerates_taint as tolerates_taint
from ._taints import untolerated_taint as untolerated_taint
from ._template_hash import compute_template_hash as compute_template_hash
from ._template_hash import prune_empty as prune_empty

__all__ = [
    "BURST_REPLICAS",
    "CONTROLLER_REVISION_HASH_LABEL",
    "EXPECTATIONS_TIMEOUT",
    "NODE_NAME_FIELD",
    "NO_EXECUTE",
    "NO_SCHEDULE",
    "POD_DELETION_COST_ANNOTATION",
    "PREFER_NO_SCHEDULE",
    "REPLICA_FAILURE",
    "SAFE_ALPHABET",
    "SLOW_START_INITIAL_BATCH_SIZE",
    "TAINT_NODE_DISK_PRESSURE",
    "TAINT_NODE_MEMORY_PRESSURE",
    "TAINT_NODE_NETWORK_UNAVAILABLE",
    "TAINT_NODE_NOT_READY",
    "TAINT_NODE_PID_PRESSURE",
    "TAINT_NODE_UNREACHABLE",
    "TAINT_NODE_UNSCHEDULABLE",
    "ControllerExpectations",
    "ControllerRefManager",
    "History",
    "LabelMatcher",
    "ReplicaKind",
    "ReplicaManager",
    "UIDTrackingControllerExpectations",
    "add_or_update_toleration",
    "calculate_replica_status",
    "compare_pods_for_deletion",
    "compute_template_hash",
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
    "node_selector_matches",
    "node_selector_term_matches",
    "pod_deletion_cost",
    "pod_from_template",
    "pod_name_prefix",
    "pod_ready_condition",
    "pods_to_delete",
    "prune_empty",
    "rank_pods_for_deletion",
    "read_root_ca",
    "recheck_deletion_timestamp",
    "required_node_affinity_matches",
    "root_ca",
    "safe_encode_string",
    "slow_start_batch",
    "sort_controller_revisions",
    "taint_text",
    "tolerates_taint",
    "untolerated_taint",
]
