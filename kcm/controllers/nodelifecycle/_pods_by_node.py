"""An index of the shared pod informer by ``spec.nodeName``."""

from __future__ import annotations

from kcm.informers import Lister, SharedIndexInformer
from kcm.models import Pod

__all__ = ["NODE_INDEX", "ensure_node_index", "pods_on_node"]

NODE_INDEX = "nodelifecycle/nodeName"


def _node_of(pod: Pod) -> list[str]:
    name = (pod.spec.node_name if pod.spec else None) or ""
    return [name] if name else []


def ensure_node_index(informer: SharedIndexInformer[Pod]) -> None:
    """Add :data:`NODE_INDEX` to the pod informer unless another user added it."""
    try:
        informer.add_indexers({NODE_INDEX: _node_of})
    except ValueError:
        pass  # the taint manager and the controller share the informer


def pods_on_node(pods: Lister[Pod], node: str) -> list[Pod]:
    """The cached pods bound to ``node``."""
    return pods.by_index(NODE_INDEX, node)
