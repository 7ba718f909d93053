"""Node selectors and required node affinity: which nodes a pod may run on by their labels and
name (``component-helpers/scheduling/corev1/nodeaffinity``).

A pod's ``nodeSelector`` (every label equal) and its
``affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution`` (terms ORed; within a
term every ``matchExpressions`` entry on the labels and every ``matchFields`` entry on the
node's ``metadata.name`` ANDed) must both hold. An empty term matches no node; a term that does
not parse (an unknown operator, ``Gt`` without one integer, a field with more than one value)
matches no node either, and the other terms still count. The DaemonSet controller places its
pods with it; a scheduler filters nodes with it.
"""

from __future__ import annotations

from kcm.models.core_v1 import (
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PodSpec,
)
from kcm.selectors import Operator, Requirement, SelectorParseError

__all__ = [
    "NODE_NAME_FIELD",
    "node_selector_matches",
    "node_selector_term_matches",
    "required_node_affinity_matches",
]

NODE_NAME_FIELD = "metadata.name"
"""The one node field ``matchFields`` can select on (``metav1.ObjectNameField``)."""

_LABEL_OPERATORS = {
    "In": Operator.IN,
    "NotIn": Operator.NOT_IN,
    "Exists": Operator.EXISTS,
    "DoesNotExist": Operator.DOES_NOT_EXIST,
    "Gt": Operator.GREATER_THAN,
    "Lt": Operator.LESS_THAN,
}


class _Unparsable(Exception):
    """A requirement of a term that kube's parser refuses: the term matches nothing."""


def _label_requirement(expr: NodeSelectorRequirement) -> Requirement:
    operator = _LABEL_OPERATORS.get(expr.operator or "")
    if operator is None:
        raise _Unparsable(f"unsupported operator {expr.operator!r}")
    try:
        return Requirement(expr.key or "", operator, expr.values or ())
    except SelectorParseError as exc:
        raise _Unparsable(str(exc)) from exc


def _field_matches(expr: NodeSelectorRequirement, node_name: str) -> bool:
    values = list(expr.values or ())
    if expr.operator not in ("In", "NotIn") or len(values) != 1:
        raise _Unparsable(f"matchFields: {expr.operator} needs exactly one value")
    actual = node_name if expr.key == NODE_NAME_FIELD else ""
    return (actual == values[0]) == (expr.operator == "In")


def _term_matches(term: NodeSelectorTerm, node: Node) -> bool:
    labels = node.metadata.labels or {}
    expressions = [_label_requirement(e) for e in term.match_expressions or ()]
    name = node.metadata.name or ""
    fields = [_field_matches(e, name) for e in term.match_fields or ()]
    if not all(r.matches(labels) for r in expressions):
        return False
    # Go ignores matchFields for a node without a name (no fields to match against).
    return not name or all(fields)


def node_selector_term_matches(term: NodeSelectorTerm, node: Node) -> bool:
    """Whether one term selects ``node``: not empty, parses, and every expression and field
    requirement holds."""
    if not term.match_expressions and not term.match_fields:
        return False
    try:
        return _term_matches(term, node)
    except _Unparsable:
        return False


def node_selector_matches(selector: NodeSelector, node: Node) -> bool:
    """Whether any term of ``selector`` selects ``node`` (no terms: none does)."""
    return any(node_selector_term_matches(t, node) for t in selector.node_selector_terms or ())


def required_node_affinity_matches(spec: PodSpec | None, node: Node) -> bool:
    """Whether a pod with ``spec`` may run on ``node`` by its ``nodeSelector`` and required
    node affinity (``GetRequiredNodeAffinity(pod).Match(node)``); a spec with neither fits
    every node."""
    if spec is None:
        return True
    labels = node.metadata.labels or {}
    if any(labels.get(k) != v for k, v in (spec.node_selector or {}).items()):
        return False
    affinity = spec.affinity.node_affinity if spec.affinity else None
    required = affinity.required_during_scheduling_ignored_during_execution if affinity else None
    return required is None or node_selector_matches(required, node)
