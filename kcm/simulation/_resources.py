"""Pod resource requests and node fit, the little of kube-scheduler the simulation needs."""

from __future__ import annotations

from decimal import Decimal

from kcm.models import Node, Pod, parse_quantity

__all__ = ["TERMINAL_PHASES", "node_is_ready", "pod_requests", "tolerates", "untolerated_taint"]

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


def tolerates(pod: Pod, key: str | None, value: str | None, effect: str | None) -> bool:
    """Whether one of the pod's tolerations matches the taint."""
    for t in (pod.spec.tolerations if pod.spec else None) or []:
        if t.effect and t.effect != effect:
            continue
        if t.operator == "Exists":
            if not t.key or t.key == key:
                return True
        elif t.key == key and (t.value or "") == (value or ""):
            return True
    return False


def untolerated_taint(pod: Pod, node: Node) -> str | None:
    """The first NoSchedule/NoExecute taint of ``node`` the pod does not tolerate."""
    for taint in (node.spec.taints if node.spec else None) or []:
        if taint.effect in ("NoSchedule", "NoExecute") and not tolerates(
            pod, taint.key, taint.value, taint.effect
        ):
            return f"{taint.key}={taint.value or ''}:{taint.effect}"
    return None
