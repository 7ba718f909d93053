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
  ``pod-deletion-cost``), :func:`slow_start_batch` for creating many and :func:`delete_pods`
  for deleting them with expectations and events.
* **Keeping N pods of an owner**: :class:`ReplicaManager` over a :class:`ReplicaKind` (the
  ReplicaSet and ReplicationController controllers, or your own kind, as a
  :class:`ReplicaController`) and its status (:func:`calculate_replica_status`).
* **ControllerRevision history**: :class:`History` and the pure helpers around it
  (:func:`new_controller_revision`, :func:`hash_controller_revision`, ...), for controllers that
  keep revisions of their template (DaemonSet, StatefulSet); :func:`template_patch` and
  :func:`template_from_patch` are a pod template as revision data, and back.
* **Service endpoints**: a pod as an endpoint (:func:`should_pod_be_in_endpoints`,
  :func:`find_port`, :func:`should_set_hostname`), the Services a pod event concerns
  (:func:`services_to_update_on_pod_change`, and :class:`ServicePodEvents`, the pod event
  handler), the last-change trigger time (:class:`TriggerTimeTracker`), the retry limit of
  their syncs (:func:`sync_with_retry_limit`), and for EndpointSlice writers the endpoint
  identity (:class:`EndpointSet`), port groups and the generations they wrote
  (:class:`EndpointSliceTracker`, with :class:`StaleSliceSyncs` for syncs held back by a
  stale cache), their slice event handler (:class:`EndpointSliceEvents`), queue pacing
  (:func:`endpoint_slice_rate_limiter`) and writes (:func:`write_endpoint_slices`).
* **Placing pods on nodes**: taints against tolerations (:func:`tolerates_taint`,
  :func:`untolerated_taint`, :func:`add_or_update_toleration`) and node affinity
  (:func:`required_node_affinity_matches`, :func:`node_selector_matches`), for the DaemonSet
  controller and schedulers; :func:`compute_template_hash`, the pod template hash of Deployments
  and DaemonSets.
* **Certificate requests**: the built-in signer names, :func:`parse_certificate_request`,
  :func:`is_approved`/:func:`has_true_condition`, and the kubelet request shapes
  (:func:`kubelet_client_refusal`, :func:`kubelet_serving_refusal`) the CSR signer and approver
  both check.
* **Pods and their claims**: :func:`ephemeral_claim_name`, :func:`ephemeral_claim_refusal`
  and the pod→claim index (:func:`add_pod_pvc_index`, :func:`pod_pvc_keys`) of the PVC
  protection and ephemeral volume controllers.
* **CSI volumes**: the VolumeAttachment name (:func:`volume_attachment_name`) and unique
  volume name (:func:`csi_unique_volume_name`) of a CSI volume on a node, the PV behind a pod's
  volume (:func:`csi_volume_of`), :func:`is_pod_terminated` and the node annotations of the
  attach/detach controller, which the simulated CSI driver and kubelet read too.
* **Volume binding**: the annotations the PV binder, a scheduler and an external provisioner
  talk through (:data:`ANN_SELECTED_NODE`, :data:`ANN_STORAGE_PROVISIONER`, ...),
  :func:`claim_class`/:func:`volume_class`, :func:`is_volume_bound_to_claim` and
  :func:`volume_fits_node`.
* **A key queue and its workers**: :class:`QueueController`, the skeleton of the single-kind
  controllers (the common options, a :class:`~kcm.runtime.Controller`, ``run``),
  :class:`EnqueueOn`, the handler for only the events kube listens to, and
  :func:`certificate_rate_limiter`, the CSR approver's and signer's queue.
* **Bootstrap tokens**: :func:`bootstrap_token_id`, :func:`bootstrap_token_expiration` and
  :func:`secret_text` for the bootstrap signer and the token cleaner.
* **Timer loops**: :func:`run_every`, the loop of a controller that works in passes rather
  than per object (Go's ``wait.Until`` / ``wait.NonSlidingUntil``).
* **Cloud controllers**: :func:`cloud_support_refusal`, why a controller that needs a part of
  the cloud provider (:data:`CloudPart`) cannot run on it: the check of ``add_to_manager`` and
  of the constructor alike.
* **Feature gates**: :func:`feature_gates` (``--feature-gates`` as the manager a controller
  was added to holds them; 1.24's defaults otherwise), :class:`FeatureGates`.
* **Small shared answers**: :func:`is_namespace_terminating` (a create refused by a
  terminating namespace), :func:`namespace_keys` (the namespace an object lives in, as a
  handler's keys), :func:`error_text` (an error in an event, as Go prints it),
  :func:`log_failed_pass` (a failed periodic pass: one line when expected),
  :func:`finished_condition`/:func:`is_finished` (Jobs), :func:`safe_encode_string` (hashes as
  text), and :func:`root_ca`/:func:`read_root_ca` (the
  ``--root-ca-file`` bundle the service-account controllers hand out).

See docs/controllerkit.md.
"""

from ._bootstrap_tokens import BOOTSTRAP_TOKEN_NAMESPACE as BOOTSTRAP_TOKEN_NAMESPACE
from ._bootstrap_tokens import BOOTSTRAP_TOKEN_SECRET_TYPE as BOOTSTRAP_TOKEN_SECRET_TYPE
from ._bootstrap_tokens import bootstrap_token_expiration as bootstrap_token_expiration
from ._bootstrap_tokens import bootstrap_token_id as bootstrap_token_id
from ._bootstrap_tokens import secret_text as secret_text
from ._certificate_requests import KUBE_APISERVER_CLIENT as KUBE_APISERVER_CLIENT
from ._certificate_requests import KUBE_APISERVER_CLIENT_KUBELET as KUBE_APISERVER_CLIENT_KUBELET
from ._certificate_requests import KUBELET_CLIENT_USAGES as KUBELET_CLIENT_USAGES
from ._certificate_requests import KUBELET_SERVING as KUBELET_SERVING
from ._certificate_requests import KUBELET_SERVING_USAGES as KUBELET_SERVING_USAGES
from ._certificate_requests import LEGACY_UNKNOWN as LEGACY_UNKNOWN
from ._certificate_requests import certificate_rate_limiter as certificate_rate_limiter
from ._certificate_requests import has_true_condition as has_true_condition
from ._certificate_requests import is_approved as is_approved
from ._certificate_requests import is_denied as is_denied
from ._certificate_requests import kubelet_client_refusal as kubelet_client_refusal
from ._certificate_requests import kubelet_serving_refusal as kubelet_serving_refusal
from ._certificate_requests import parse_certificate_request as parse_certificate_request
from ._cloud_support import CloudPart as CloudPart
from ._cloud_support import cloud_support_refusal as cloud_support_refusal
from ._controller_base import ControllerBase as ControllerBase
from ._controller_base import ControllerOptions as ControllerOptions
from ._controller_ref_manager import ControllerRefManager as ControllerRefManager
from ._controller_ref_manager import LabelMatcher as LabelMatcher
from ._controller_ref_manager import recheck_deletion_timestamp as recheck_deletion_timestamp
from ._csi_volumes import (
    CONTROLLER_MANAGED_ATTACH_DETACH_ANNOTATION as CONTROLLER_MANAGED_ATTACH_DETACH_ANNOTATION,
)
from ._csi_volumes import CSI_PLUGIN_NAME as CSI_PLUGIN_NAME
from ._csi_volumes import (
    KEEP_TERMINATED_POD_VOLUMES_ANNOTATION as KEEP_TERMINATED_POD_VOLUMES_ANNOTATION,
)
from ._csi_volumes import CSIVolume as CSIVolume
from ._csi_volumes import csi_unique_volume_name as csi_unique_volume_name
from ._csi_volumes import csi_volume_of as csi_volume_of
from ._csi_volumes import is_controller_managed as is_controller_managed
from ._csi_volumes import is_pod_terminated as is_pod_terminated
from ._csi_volumes import volume_attachment_name as volume_attachment_name
from ._endpoint_slice_queue import EndpointSliceEvents as EndpointSliceEvents
from ._endpoint_slice_queue import endpoint_slice_rate_limiter as endpoint_slice_rate_limiter
from ._endpoint_slice_tracker import EndpointSliceTracker as EndpointSliceTracker
from ._endpoint_slice_tracker import StaleInformerCache as StaleInformerCache
from ._endpoint_slice_writes import write_endpoint_slices as write_endpoint_slices
from ._endpoint_slices import MANAGED_BY_LABEL as MANAGED_BY_LABEL
from ._endpoint_slices import SERVICE_NAME_LABEL as SERVICE_NAME_LABEL
from ._endpoint_slices import SKIP_MIRROR_LABEL as SKIP_MIRROR_LABEL
from ._endpoint_slices import EndpointSet as EndpointSet
from ._endpoint_slices import endpoint_key as endpoint_key
from ._endpoint_slices import endpoint_slice_prefix as endpoint_slice_prefix
from ._endpoint_slices import endpoints_equal_beyond_key as endpoints_equal_beyond_key
from ._endpoint_slices import managed_by as managed_by
from ._endpoint_slices import port_map_key as port_map_key
from ._endpoint_slices import service_key_for_slice as service_key_for_slice
from ._enqueue_on import EnqueueOn as EnqueueOn
from ._error_text import error_text as error_text
from ._expectations import EXPECTATIONS_TIMEOUT as EXPECTATIONS_TIMEOUT
from ._expectations import ControllerExpectations as ControllerExpectations
from ._expectations import UIDTrackingControllerExpectations as UIDTrackingControllerExpectations
from ._failed_pass import log_failed_pass as log_failed_pass
from ._feature_gates import KNOWN_FEATURE_GATES as KNOWN_FEATURE_GATES
from ._feature_gates import FeatureGate as FeatureGate
from ._feature_gates import FeatureGates as FeatureGates
from ._feature_gates import feature_gates as feature_gates
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
from ._namespaces import namespace_keys as namespace_keys
from ._node_affinity import NODE_NAME_FIELD as NODE_NAME_FIELD
from ._node_affinity import node_selector_matches as node_selector_matches
from ._node_affinity import node_selector_term_matches as node_selector_term_matches
from ._node_affinity import required_node_affinity_matches as required_node_affinity_matches
from ._periodic import run_every as run_every
from ._pod_deletion import PodDeletions as PodDeletions
from ._pod_deletion import delete_pods as delete_pods
from ._pod_endpoints import find_port as find_port
from ._pod_endpoints import is_ipv6 as is_ipv6
from ._pod_endpoints import is_pod_finished as is_pod_finished
from ._pod_endpoints import pod_ips_of_family as pod_ips_of_family
from ._pod_endpoints import pod_target_ref as pod_target_ref
from ._pod_endpoints import should_pod_be_in_endpoints as should_pod_be_in_endpoints
from ._pod_endpoints import should_set_hostname as should_set_hostname
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
from ._pod_volumes import POD_PVC_INDEX as POD_PVC_INDEX
from ._pod_volumes import add_pod_pvc_index as add_pod_pvc_index
from ._pod_volumes import ephemeral_claim_name as ephemeral_claim_name
from ._pod_volumes import ephemeral_claim_refusal as ephemeral_claim_refusal
from ._pod_volumes import pod_pvc_keys as pod_pvc_keys
from ._queue_controller import QueueController as QueueController
from ._queue_controller import QueueControllerOptions as QueueControllerOptions
from ._replica_controller import ReplicaController as ReplicaController
from ._replica_controller import ReplicaControllerOptions as ReplicaControllerOptions
from ._replica_manager import BURST_REPLICAS as BURST_REPLICAS
from ._replica_manager import ReplicaKind as ReplicaKind
from ._replica_manager import ReplicaManager as ReplicaManager
from ._replica_status import REPLICA_FAILURE as REPLICA_FAILURE
from ._replica_status import calculate_replica_status as calculate_replica_status
from ._replica_status import desired_replicas as desired_replicas
from ._retry_limit import MAX_SYNC_RETRIES as MAX_SYNC_RETRIES
from ._retry_limit import sync_with_retry_limit as sync_with_retry_limit
from ._root_ca import read_root_ca as read_root_ca
from ._root_ca import root_ca as root_ca
from ._safe_encoding import SAFE_ALPHABET as SAFE_ALPHABET
from ._safe_encoding import safe_encode_string as safe_encode_string
from ._service_pod_events import ServicePodEvents as ServicePodEvents
from ._services import HEADLESS_SERVICE_LABEL as HEADLESS_SERVICE_LABEL
from ._services import LEADER_ELECTION_ANNOTATION as LEADER_ELECTION_ANNOTATION
from ._services import pod_endpoints_changed as pod_endpoints_changed
from ._services import service_ip_set as service_ip_set
from ._services import service_selector as service_selector
from ._services import services_for_pod as services_for_pod
from ._services import services_to_update_on_pod_change as services_to_update_on_pod_change
from ._slow_start import SLOW_START_INITIAL_BATCH_SIZE as SLOW_START_INITIAL_BATCH_SIZE
from ._slow_start import slow_start_batch as slow_start_batch
from ._stale_slice_syncs import StaleSliceSyncs as StaleSliceSyncs
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
from ._template_revision import template_from_patch as template_from_patch
from ._template_revision import template_patch as template_patch
from ._trigger_time import (
    LAST_CHANGE_TRIGGER_TIME_ANNOTATION as LAST_CHANGE_TRIGGER_TIME_ANNOTATION,
)
from ._trigger_time import TriggerTimeTracker as TriggerTimeTracker
from ._trigger_time import format_trigger_time as format_trigger_time
from ._volume_binding import ANN_BETA_STORAGE_CLASS as ANN_BETA_STORAGE_CLASS
from ._volume_binding import ANN_BETA_STORAGE_PROVISIONER as ANN_BETA_STORAGE_PROVISIONER
from ._volume_binding import ANN_BIND_COMPLETED as ANN_BIND_COMPLETED
from ._volume_binding import ANN_BOUND_BY_CONTROLLER as ANN_BOUND_BY_CONTROLLER
from ._volume_binding import ANN_DYNAMICALLY_PROVISIONED as ANN_DYNAMICALLY_PROVISIONED
from ._volume_binding import ANN_SELECTED_NODE as ANN_SELECTED_NODE
from ._volume_binding import ANN_STORAGE_PROVISIONER as ANN_STORAGE_PROVISIONER
from ._volume_binding import claim_class as claim_class
from ._volume_binding import is_volume_bound_to_claim as is_volume_bound_to_claim
from ._volume_binding import volume_class as volume_class
from ._volume_binding import volume_fits_node as volume_fits_node

__all__ = [
    "ANN_BETA_STORAGE_CLASS",
    "ANN_BETA_STORAGE_PROVISIONER",
    "ANN_BIND_COMPLETED",
    "ANN_BOUND_BY_CONTROLLER",
    "ANN_DYNAMICALLY_PROVISIONED",
    "ANN_SELECTED_NODE",
    "ANN_STORAGE_PROVISIONER",
    "BOOTSTRAP_TOKEN_NAMESPACE",
    "BOOTSTRAP_TOKEN_SECRET_TYPE",
    "BURST_REPLICAS",
    "CONTROLLER_MANAGED_ATTACH_DETACH_ANNOTATION",
    "CONTROLLER_REVISION_HASH_LABEL",
    "CSI_PLUGIN_NAME",
    "EXPECTATIONS_TIMEOUT",
    "HEADLESS_SERVICE_LABEL",
    "KEEP_TERMINATED_POD_VOLUMES_ANNOTATION",
    "KNOWN_FEATURE_GATES",
    "KUBELET_CLIENT_USAGES",
    "KUBELET_SERVING",
    "KUBELET_SERVING_USAGES",
    "KUBE_APISERVER_CLIENT",
    "KUBE_APISERVER_CLIENT_KUBELET",
    "LAST_CHANGE_TRIGGER_TIME_ANNOTATION",
    "LEADER_ELECTION_ANNOTATION",
    "LEGACY_UNKNOWN",
    "MANAGED_BY_LABEL",
    "MAX_SYNC_RETRIES",
    "NODE_NAME_FIELD",
    "NO_EXECUTE",
    "NO_SCHEDULE",
    "POD_DELETION_COST_ANNOTATION",
    "POD_PVC_INDEX",
    "PREFER_NO_SCHEDULE",
    "REPLICA_FAILURE",
    "SAFE_ALPHABET",
    "SERVICE_NAME_LABEL",
    "SKIP_MIRROR_LABEL",
    "SLOW_START_INITIAL_BATCH_SIZE",
    "TAINT_NODE_DISK_PRESSURE",
    "TAINT_NODE_MEMORY_PRESSURE",
    "TAINT_NODE_NETWORK_UNAVAILABLE",
    "TAINT_NODE_NOT_READY",
    "TAINT_NODE_PID_PRESSURE",
    "TAINT_NODE_UNREACHABLE",
    "TAINT_NODE_UNSCHEDULABLE",
    "CSIVolume",
    "CloudPart",
    "ControllerBase",
    "ControllerExpectations",
    "ControllerOptions",
    "ControllerRefManager",
    "EndpointSet",
    "EndpointSliceEvents",
    "EndpointSliceTracker",
    "EnqueueOn",
    "FeatureGate",
    "FeatureGates",
    "History",
    "LabelMatcher",
    "PodDeletions",
    "QueueController",
    "QueueControllerOptions",
    "ReplicaController",
    "ReplicaControllerOptions",
    "ReplicaKind",
    "ReplicaManager",
    "ServicePodEvents",
    "StaleInformerCache",
    "StaleSliceSyncs",
    "TriggerTimeTracker",
    "UIDTrackingControllerExpectations",
    "add_or_update_toleration",
    "add_pod_pvc_index",
    "bootstrap_token_expiration",
    "bootstrap_token_id",
    "calculate_replica_status",
    "certificate_rate_limiter",
    "claim_class",
    "cloud_support_refusal",
    "compare_pods_for_deletion",
    "compute_template_hash",
    "controller_revision_name",
    "csi_unique_volume_name",
    "csi_volume_of",
    "delete_pods",
    "desired_replicas",
    "endpoint_key",
    "endpoint_slice_prefix",
    "endpoint_slice_rate_limiter",
    "endpoints_equal_beyond_key",
    "ephemeral_claim_name",
    "ephemeral_claim_refusal",
    "equal_revision",
    "error_text",
    "feature_gates",
    "find_equal_revisions",
    "find_port",
    "finished_condition",
    "format_trigger_time",
    "has_true_condition",
    "hash_controller_revision",
    "is_approved",
    "is_controller_managed",
    "is_denied",
    "is_finished",
    "is_ipv6",
    "is_namespace_terminating",
    "is_pod_active",
    "is_pod_available",
    "is_pod_finished",
    "is_pod_ready",
    "is_pod_terminated",
    "is_volume_bound_to_claim",
    "kubelet_client_refusal",
    "kubelet_serving_refusal",
    "log_failed_pass",
    "managed_by",
    "namespace_keys",
    "new_controller_revision",
    "node_selector_matches",
    "node_selector_term_matches",
    "parse_certificate_request",
    "pod_deletion_cost",
    "pod_endpoints_changed",
    "pod_from_template",
    "pod_ips_of_family",
    "pod_name_prefix",
    "pod_pvc_keys",
    "pod_ready_condition",
    "pod_target_ref",
    "pods_to_delete",
    "port_map_key",
    "prune_empty",
    "rank_pods_for_deletion",
    "read_root_ca",
    "recheck_deletion_timestamp",
    "required_node_affinity_matches",
    "root_ca",
    "run_every",
    "safe_encode_string",
    "secret_text",
    "service_ip_set",
    "service_key_for_slice",
    "service_selector",
    "services_for_pod",
    "services_to_update_on_pod_change",
    "should_pod_be_in_endpoints",
    "should_set_hostname",
    "slow_start_batch",
    "sort_controller_revisions",
    "sync_with_retry_limit",
    "taint_text",
    "template_from_patch",
    "template_patch",
    "tolerates_taint",
    "untolerated_taint",
    "volume_attachment_name",
    "volume_class",
    "volume_fits_node",
    "write_endpoint_slices",
]
