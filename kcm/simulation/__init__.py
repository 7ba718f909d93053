"""A simulated cluster: Ready nodes, a scheduler and a kubelet player.

With no real nodes, Deployments, Jobs and CronJobs would sit at zero ready pods. The
simulation fills that gap on kcm's public client, informers and runtime only:
:class:`NodeSimulator` registers Ready Nodes with capacity and renews their Leases in
``kube-node-lease``;
:class:`Scheduler` binds pending pods to those nodes through ``pods/binding``; :class:`Kubelet`
moves bound pods to Running, then Ready, finishes run-to-completion pods, and removes pods
being deleted; pods get IPs from their node's ``podCIDR`` (:class:`PodIPAllocator`) and are
Ready as their simulated readiness probes say (:data:`READY_ANNOTATION`).
:class:`Provisioner` plays the simulated CSI driver's external-provisioner
(:data:`SIMULATED_DRIVER`) and creates the default StorageClass ``standard``;
:class:`CSIAttacher` plays the simulated CSI driver ``simulated.kcm.dev``'s external attacher
(its CSIDriver, a CSINode per node, VolumeAttachments attached), :class:`CSIResizer` its
external resizer (a grown claim's PV and capacity), and the kubelet waits for them
(:class:`AttachedVolumes`) and reports volumes in use (:class:`VolumesInUseReporter`).
:class:`SimulatedCluster` runs them all. Everything is timed on an injected
clock. See docs/simulation.md.
"""

from ._attached_volumes import AttachedVolumes as AttachedVolumes
from ._attached_volumes import VolumesInUseReporter as VolumesInUseReporter
from ._cluster import SimulatedCluster as SimulatedCluster
from ._config import DURATION_ANNOTATION as DURATION_ANNOTATION
from ._config import EXIT_CODE_ANNOTATION as EXIT_CODE_ANNOTATION
from ._config import FAILURE_ANNOTATION as FAILURE_ANNOTATION
from ._config import READY_ANNOTATION as READY_ANNOTATION
from ._config import SIMULATED_LABEL as SIMULATED_LABEL
from ._config import SimulationConfig as SimulationConfig
from ._config import parse_duration as parse_duration
from ._csi_attacher import ATTACHER_FINALIZER as ATTACHER_FINALIZER
from ._csi_attacher import CSI_DRIVER_NAME as CSI_DRIVER_NAME
from ._csi_attacher import CSIAttacher as CSIAttacher
from ._csi_attacher import attacher_finalizer as attacher_finalizer
from ._csi_resizer import CSIResizer as CSIResizer
from ._kubelet import Kubelet as Kubelet
from ._nodes import NODE_LEASE_NAMESPACE as NODE_LEASE_NAMESPACE
from ._nodes import NodeSimulator as NodeSimulator
from ._nodes import pod_cidr_for as pod_cidr_for
from ._pod_ips import PodIPAllocator as PodIPAllocator
from ._pod_ips import PodIPsExhausted as PodIPsExhausted
from ._provisioner import DEFAULT_CLASS_ANNOTATION as DEFAULT_CLASS_ANNOTATION
from ._provisioner import DEFAULT_STORAGE_CLASS as DEFAULT_STORAGE_CLASS
from ._provisioner import SIMULATED_DRIVER as SIMULATED_DRIVER
from ._provisioner import Provisioner as Provisioner
from ._scheduler import NODE_NAME_INDEX as NODE_NAME_INDEX
from ._scheduler import EventRecorder as EventRecorder
from ._scheduler import Scheduler as Scheduler

__all__ = [
    "ATTACHER_FINALIZER",
    "CSI_DRIVER_NAME",
    "DEFAULT_CLASS_ANNOTATION",
    "DEFAULT_STORAGE_CLASS",
    "DURATION_ANNOTATION",
    "EXIT_CODE_ANNOTATION",
    "FAILURE_ANNOTATION",
    "NODE_LEASE_NAMESPACE",
    "NODE_NAME_INDEX",
    "READY_ANNOTATION",
    "SIMULATED_DRIVER",
    "SIMULATED_LABEL",
    "AttachedVolumes",
    "CSIAttacher",
    "CSIResizer",
    "EventRecorder",
    "Kubelet",
    "NodeSimulator",
    "PodIPAllocator",
    "PodIPsExhausted",
    "Provisioner",
    "Scheduler",
    "SimulatedCluster",
    "SimulationConfig",
    "VolumesInUseReporter",
    "attacher_finalizer",
    "parse_duration",
    "pod_cidr_for",
]
