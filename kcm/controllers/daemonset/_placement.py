"""Where a DaemonSet's pods belong: the placement predicate and the pod's node pin
(``nodeShouldRunDaemonPod``, ``NewPod``, ``AddOrUpdateDaemonPodTolerations``,
``ReplaceDaemonSetPodNodeNameNodeAffinity``, ``GetTargetNodeName``).

The pod the DaemonSet would create is judged against each node: its template's ``nodeName``,
``nodeSelector`` and required node affinity must fit, and every NoSchedule and NoExecute taint
must be tolerated, counting the tolerations every DaemonSet pod gets (node problems and
cordons never keep a daemon off its node). A pod that may no longer be placed on a node may
still *keep running* there unless the node has a NoExecute taint it does not tolerate. The pod
is created without a node name: a required node-affinity term on ``metadata.name`` pins it to
its node and the scheduler binds it.
"""

from __future__ import annotations

from typing import NamedTuple

import msgspec

from kcm.controllerkit import (
    NO_EXECUTE,
    NO_SCHEDULE,
    NODE_NAME_FIELD,
    TAINT_NODE_DISK_PRESSURE,
    TAINT_NODE_MEMORY_PRESSURE,
    TAINT_NODE_NETWORK_UNAVAILABLE,
    TAINT_NODE_NOT_READY,
    TAINT_NODE_PID_PRESSURE,
    TAINT_NODE_UNREACHABLE,
    TAINT_NODE_UNSCHEDULABLE,
    add_or_update_toleration,
    required_node_affinity_matches,
    untolerated_taint,
)
from kcm.models.apps_v1 import DaemonSet
from kcm.models.core_v1 import (
    Affinity,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PodSpec,
    Toleration,
)
from kcm.models.meta_v1 import ObjectMeta

__all__ = [
    "DAEMON_POD_TOLERATIONS",
    "Placement",
    "add_daemon_pod_tolerations",
    "new_daemon_pod",
    "node_should_run_daemon_pod",
    "replace_node_name_affinity",
    "target_node_name",
]


def _exists(key: str, effect: str) -> Toleration:
    return Toleration(key=key, operator="Exists", effect=effect)


DAEMON_POD_TOLERATIONS: tuple[Toleration, ...] = (
    _exists(TAINT_NODE_NOT_READY, NO_EXECUTE),
    _exists(TAINT_NODE_UNREACHABLE, NO_EXECUTE),
    _exists(TAINT_NODE_DISK_PRESSURE, NO_SCHEDULE),
    _exists(TAINT_NODE_MEMORY_PRESSURE, NO_SCHEDULE),
    _exists(TAINT_NODE_PID_PRESSURE, NO_SCHEDULE),
    _exists(TAINT_NODE_UNSCHEDULABLE, NO_SCHEDULE),
)
"""What every DaemonSet pod tolerates, in this order: not-ready and unreachable NoExecute
without ``tolerationSeconds`` (a node problem never evicts it), disk, memory and PID pressure
and ``unschedulable`` NoSchedule (a cordon does not keep it off)."""

_NETWORK_UNAVAILABLE = _exists(TAINT_NODE_NETWORK_UNAVAILABLE, NO_SCHEDULE)


class Placement(NamedTuple):
    """The predicate's answer for one (node, DaemonSet)."""

    should_run: bool
    """A pod should be created on the node if it has none."""
    should_continue_running: bool
    """A pod already on the node may stay (no untolerated NoExecute taint)."""


def add_daemon_pod_tolerations(spec: PodSpec) -> PodSpec:
    """``spec`` with :data:`DAEMON_POD_TOLERATIONS` added (one that differs only in
    ``tolerationSeconds`` is replaced), plus network-unavailable NoSchedule for a
    ``hostNetwork`` pod."""
    tolerations = list(spec.tolerations or ())
    wanted = [*DAEMON_POD_TOLERATIONS, *((_NETWORK_UNAVAILABLE,) if spec.host_network else ())]
    for toleration in wanted:
        tolerations = add_or_update_toleration(tolerations, toleration)
    return msgspec.structs.replace(spec, tolerations=tolerations)


def new_daemon_pod(ds: DaemonSet, node_name: str) -> Pod:
    """The pod the placement predicate judges (``NewPod``): the template on ``node_name``
    with the DaemonSet tolerations."""
    template = ds.spec.template if ds.spec else None
    meta = (template.metadata if template else None) or ObjectMeta()
    spec = (template.spec if template else None) or PodSpec()
    spec = add_daemon_pod_tolerations(msgspec.structs.replace(spec, node_name=node_name))
    return Pod(metadata=msgspec.structs.replace(meta, namespace=ds.metadata.namespace), spec=spec)


def node_should_run_daemon_pod(node: Node, ds: DaemonSet) -> Placement:
    """Whether ``ds`` should run a pod on ``node``, and whether one there may keep running.

    The template's ``nodeName`` (if set) must be the node, its ``nodeSelector`` and required
    node affinity must match; otherwise neither. Then every NoSchedule and NoExecute taint
    must be tolerated to run; with only NoSchedule ones untolerated an existing pod continues.
    ``spec.unschedulable`` itself is not looked at (only the taint a node lifecycle controller
    derives from it, which daemon pods tolerate).
    """
    name = node.metadata.name or ""
    pod = new_daemon_pod(ds, name)
    template = ds.spec.template if ds.spec else None
    template_node = template.spec.node_name if template and template.spec else None
    if template_node and template_node != name:
        return Placement(False, False)
    if not required_node_affinity_matches(pod.spec, node):
        return Placement(False, False)
    taints = node.spec.taints if node.spec else None
    tolerations = pod.spec.tolerations if pod.spec else None
    if untolerated_taint(taints, tolerations) is None:
        return Placement(True, True)
    evicting = untolerated_taint(taints, tolerations, effects=(NO_EXECUTE,))
    return Placement(False, evicting is None)


def replace_node_name_affinity(affinity: Affinity | None, node_name: str) -> Affinity:
    """``affinity`` whose required node affinity is exactly one term selecting ``node_name``
    by ``metadata.name`` (``ReplaceDaemonSetPodNodeNameNodeAffinity``); preferred terms, pod
    affinity and anti-affinity are kept."""
    term = NodeSelectorTerm(
        match_fields=[
            NodeSelectorRequirement(key=NODE_NAME_FIELD, operator="In", values=[node_name])
        ]
    )
    required = NodeSelector(node_selector_terms=[term])
    affinity = affinity or Affinity()
    node_affinity = affinity.node_affinity or NodeAffinity()
    node_affinity = msgspec.structs.replace(
        node_affinity, required_during_scheduling_ignored_during_execution=required
    )
    return msgspec.structs.replace(affinity, node_affinity=node_affinity)


def target_node_name(pod: Pod) -> str | None:
    """The node a daemon pod is for (``GetTargetNodeName``): its ``nodeName``, else the value of
    the first ``metadata.name In [one node]`` field requirement of its required node affinity;
    None when neither says."""
    spec = pod.spec
    if spec is None:
        return None
    if spec.node_name:
        return spec.node_name
    affinity = spec.affinity.node_affinity if spec.affinity else None
    required = affinity.required_during_scheduling_ignored_during_execution if affinity else None
    for term in (required.node_selector_terms if required else None) or ():
        for expr in term.match_fields or ():
            if expr.key == NODE_NAME_FIELD and expr.operator == "In":
                values = list(expr.values or ())
                return values[0] if len(values) == 1 else None
    return None
