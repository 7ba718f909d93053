"""Pod resource requests and node readiness, the little of kube-scheduler the simulation needs
(its filters are in :mod:`._filters`)."""

from __future__ import annotations

from decimal import Decimal

from kcm.models import Node, Pod, parse_quantity

__all__ = ["TERMINAL_PHASES", "node_is_ready", "pod_requests"]

TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})


def pod_requests(pod: Pod) -> tuple[Decimal, Decimal]:
    """The pod's (cpu cores, memory bytes) requests: the sum over its containers, or the
    largest init container's if that is more (kube-scheduler's rule)."""
    spec = pod.spec
    if spec is None:
        return Decimal(0), Decimal(0)

    def of(containers: list[object] | None) -> list[tuple[Decimal, Decimal]]:
        out = []
        for c in containers or []:
            requests = getattr(getattr(c, "resources", None), "requests", None) or {}
            out.append(
                (
                    parse_quantity(requests.get("cpu", "0")),
                    parse_quantity(requests.get("memory", "0")),
                )
            )
        return out

    main = of(list(spec.containers or []))
    cpu = sum((c for c, _ in main), Decimal(0))
    memory = sum((m for _, m in main), Decimal(0))
    for init_cpu, init_memory in of(list(spec.init_containers or [])):
        cpu, memory = max(cpu, init_cpu), max(memory, init_memory)
    return cpu, memory


def node_is_ready(node: Node) -> bool:
    """Whether the node's Ready condition is True."""
    conditions = (node.status.conditions if node.status else None) or []
    return any(c.type == "Ready" and c.status == "True" for c in conditions)
