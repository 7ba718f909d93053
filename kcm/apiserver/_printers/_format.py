"""How kube's printers write values into cells: durations, selectors, label maps, containers,
lists with "+ N more...", and reading optional fields of a JSON object safely."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

__all__ = [
    "Obj",
    "age",
    "as_int",
    "bool_ptr",
    "containers",
    "format_labels",
    "format_selector",
    "human_duration",
    "items",
    "list_with_more",
    "load_balancer",
    "mapping",
    "parse_time",
    "selector_string",
    "since",
    "template_spec",
]

Obj = Mapping[str, Any]


def human_duration(seconds: float) -> str:
    """apimachinery's ``duration.HumanDuration``: ``59s``, ``2m``, ``5m30s``, ``3h``, ``2d4h``..."""
    whole = int(seconds)
    if whole < -1:
        return "<invalid>"
    if whole < 0:
        return "0s"
    if whole < 120:
        return f"{whole}s"
    minutes = whole // 60
    if minutes < 10:
        rest = whole % 60
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = whole // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h{rest}m" if rest else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d{rest}h" if rest else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        rest = (hours // 24) % 365
        years = hours // 24 // 365
        return f"{years}y{rest}d" if rest else f"{years}y"
    return f"{hours // 24 // 365}y"


def parse_time(ts: Any) -> datetime | None:
    """An RFC 3339 timestamp (``None`` when missing or unreadable)."""
    if not isinstance(ts, str) or not ts:
        return None
    try:
        parsed = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def since(ts: Any, now: datetime) -> str:
    """kube's ``translateTimestampSince``: ``<unknown>`` for no timestamp."""
    when = parse_time(ts)
    if when is None:
        return "<unknown>"
    return human_duration((now - when).total_seconds())


def age(obj: Obj, now: datetime) -> str:
    """The AGE cell: time since ``metadata.creationTimestamp``."""
    return since(mapping(obj, "metadata").get("creationTimestamp"), now)


def mapping(obj: Any, key: str) -> Mapping[str, Any]:
    """``obj[key]`` as a mapping (``{}`` when missing or null)."""
    value = obj.get(key) if isinstance(obj, Mapping) else None
    return value if isinstance(value, Mapping) else {}


def items(obj: Any, key: str) -> list[Any]:
    """``obj[key]`` as a list (``[]`` when missing or null)."""
    value = obj.get(key) if isinstance(obj, Mapping) else None
    return list(value) if isinstance(value, list | tuple) else []


def as_int(value: Any) -> int:
    """An integer field, 0 when unset (Go's zero value)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def bool_ptr(value: Any) -> str:
    """kube's ``printBoolPtr``: ``True``/``False``, ``<unset>`` for nil."""
    if value is None:
        return "<unset>"
    return "True" if value else "False"


def selector_string(selector: Any) -> str:
    """``metav1.LabelSelectorAsSelector(s).String()``: requirements sorted by key."""
    if not isinstance(selector, Mapping):
        return ""
    parts: list[tuple[str, str]] = [
        (str(k), f"{k}={v}") for k, v in mapping(selector, "matchLabels").items()
    ]
    for expr in items(selector, "matchExpressions"):
        key, op = str(expr.get("key", "")), expr.get("operator", "")
        values = ",".join(sorted(str(v) for v in items(expr, "values")))
        if op == "In":
            parts.append((key, f"{key} in ({values})"))
        elif op == "NotIn":
            parts.append((key, f"{key} notin ({values})"))
        elif op == "Exists":
            parts.append((key, key))
        elif op == "DoesNotExist":
            parts.append((key, f"!{key}"))
    return ",".join(text for _, text in sorted(parts, key=lambda p: p[0]))


def format_selector(selector: Any) -> str:
    """``metav1.FormatLabelSelector``: like :func:`selector_string`, ``<none>`` when empty."""
    return selector_string(selector) or "<none>"


def format_labels(labels: Any) -> str:
    """``labels.FormatLabels``: sorted ``k=v`` pairs, ``<none>`` when empty."""
    if not isinstance(labels, Mapping) or not labels:
        return "<none>"
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


def containers(pod_spec: Obj) -> tuple[str, str]:
    """kube's ``layoutContainerCells``: container names and images, comma-separated."""
    every = items(pod_spec, "containers")
    names = ",".join(str(c.get("name", "")) for c in every)
    images = ",".join(str(c.get("image", "")) for c in every)
    return names, images


def template_spec(obj: Obj) -> Obj:
    """``spec.template.spec`` of a workload."""
    return mapping(mapping(mapping(obj, "spec"), "template"), "spec")


def list_with_more(shown: list[str], total: int, limit: int = 3, empty: str = "<unset>") -> str:
    """kube's ``listWithMoreString``: the first ``limit`` entries, then ``+ N more...``."""
    text = ",".join(shown[:limit])
    if total > limit:
        return f"{text} + {total - limit} more..."
    return text or empty


def load_balancer(status: Obj) -> str:
    """kube's ``loadBalancerStatusStringer`` (wide: never clipped): the sorted, unique IPs or
    hostnames of ``status.loadBalancer.ingress``."""
    found = {
        str(i.get("ip") or i.get("hostname"))
        for i in items(mapping(status, "loadBalancer"), "ingress")
        if i.get("ip") or i.get("hostname")
    }
    return ",".join(sorted(found))
