"""The filters of kube-scheduler the simulated scheduler runs, each giving kube-scheduler's
reason when a node does not fit a pod: ``NodeUnschedulable``, ``TaintToleration``,
``NodeAffinity`` and the required pod anti-affinity half of ``InterPodAffinity``.

Taints and node affinity are matched with :mod:`kcm.controllerkit`, as the DaemonSet
controller matches them, so a daemon pod lands exactly where its controller meant it to.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from kcm.controllerkit import (
    NO_SCHEDULE,
    TAINT_NODE_UNSCHEDULABLE,
    required_node_affinity_matches,
    tolerates_taint,
    untolerated_taint,
)
from kcm.models import Node, Pod, Taint
from kcm.models.core_v1 import PodAffinityTerm
from kcm.selectors import LabelSelector, SelectorParseError

__all__ = [
    "ANTI_AFFINITY",
    "EXISTING_ANTI_AFFINITY",
    "NODE_AFFINITY",
    "UNSCHEDULABLE",
    "anti_affinity_reason",
    "node_affinity_reason",
    "taint_reason",
    "unschedulable_reason",
]

UNSCHEDULABLE = "node(s) were unschedulable"
NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"

_UNSCHEDULABLE_TAINT = Taint(key=TAINT_NODE_UNSCHEDULABLE, effect=NO_SCHEDULE)


def unschedulable_reason(pod: Pod, node: Node) -> str | None:
    """A cordoned node takes only pods that tolerate ``node.kubernetes.io/unschedulable``
    NoSchedule (daemon pods do)."""
    if not (node.spec and node.spec.unschedulable):
        return None
    tolerations = (pod.spec.tolerations if pod.spec else None) or ()
    if any(tolerates_taint(t, _UNSCHEDULABLE_TAINT) for t in tolerations):
        return None
    return UNSCHEDULABLE


def taint_reason(pod: Pod, node: Node) -> str | None:
    """The first NoSchedule or NoExecute taint the pod does not tolerate, as kube-scheduler
    (1.25 and later) names it: ``node(s) had untolerated taint {key: value}``."""
    taint = untolerated_taint(
        node.spec.taints if node.spec else None, pod.spec.tolerations if pod.spec else None
    )
    if taint is None:
        return None
    return f"node(s) had untolerated taint {{{taint.key}: {taint.value or ''}}}"


def node_affinity_reason(pod: Pod, node: Node) -> str | None:
    """``nodeSelector`` and required node affinity."""
    return None if required_node_affinity_matches(pod.spec, node) else NODE_AFFINITY


def _anti_affinity_terms(pod: Pod) -> Sequence[PodAffinityTerm]:
    affinity = pod.spec.affinity if pod.spec else None
    anti = affinity.pod_anti_affinity if affinity else None
    return (anti.required_during_scheduling_ignored_during_execution if anti else None) or ()


def _selects(term: PodAffinityTerm, owner_namespace: str, pod: Pod) -> bool:
    """Whether ``term`` (of a pod in ``owner_namespace``) selects ``pod``: the namespaces
    listed, or the owner's when none are (an empty ``namespaceSelector`` selects all; a
    non-empty one is not simulated and adds none), and the label selector (none: no pod)."""
    namespace = pod.metadata.namespace or ""
    selector_model = term.namespace_selector
    all_namespaces = selector_model is not None and not (
        selector_model.match_labels or selector_model.match_expressions
    )
    namespaces = set(term.namespaces or ())
    if not namespaces and selector_model is None:
        namespaces = {owner_namespace}
    if not all_namespaces and namespace not in namespaces:
        return False
    if term.label_selector is None:
        return False
    try:
        return LabelSelector.from_model(term.label_selector).matches(pod.metadata.labels)
    except SelectorParseError:
        return False


def _same_domain(key: str | None, a: Node, b: Node) -> bool:
    if not key:
        return False
    value = (a.metadata.labels or {}).get(key)
    return value is not None and value == (b.metadata.labels or {}).get(key)


def anti_affinity_reason(
    pod: Pod, node: Node, nodes: Iterable[Node], pods_on: Callable[[str], Iterable[Pod]]
) -> str | None:
    """Required pod anti-affinity, both ways: no pod the new one's terms select may run in the
    same topology domain (the nodes sharing the term's ``topologyKey`` label value, e.g.
    ``kubernetes.io/hostname``), and no running pod's terms may select the new one there.
    ``pods_on(node name)`` gives the live pods bound (or about to be bound) to a node."""
    own = _anti_affinity_terms(pod)
    namespace = pod.metadata.namespace or ""
    for other_node in nodes:
        residents = [
            p for p in pods_on(other_node.metadata.name or "") if p.metadata.uid != pod.metadata.uid
        ]
        for term in own:
            if _same_domain(term.topology_key, node, other_node) and any(
                _selects(term, namespace, p) for p in residents
            ):
                return ANTI_AFFINITY
        for resident in residents:
            for term in _anti_affinity_terms(resident):
                if _same_domain(term.topology_key, node, other_node) and _selects(
                    term, resident.metadata.namespace or "", pod
                ):
                    return EXISTING_ANTI_AFFINITY
    return None
