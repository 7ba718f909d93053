"""``metrics.k8s.io/v1beta1`` from the stored pods: what metrics-server would report.

A real cluster gets PodMetrics and NodeMetrics from metrics-server scraping kubelets; the
embedded cluster has no kubelets to scrape, so usage is declared. A pod states its simulated
usage in the ``kcm.dev/simulate-usage`` annotation (plain data, so the server computes it from the
pod itself and needs no simulation): ``{"cpu": "250m", "memory": "64Mi"}`` for the pod (split
evenly over its containers) or ``{"app": {"cpu": "250m"}, ...}`` per container. A pod without
it, a container it does not name, or an annotation that does not parse, uses a tenth of its
requests. Only running pods on a node have metrics (as metrics-server); a node's usage is the
sum of its running pods', and only Ready nodes have metrics.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any

from kcm.models import format_quantity, parse_quantity
from kcm.selectors import LabelSelector, SelectorParseError

from ._registry import Resource
from ._status import StatusError
from ._store import Store

__all__ = ["METRICS_GROUP", "USAGE_ANNOTATION", "container_usage", "serve_metrics"]

METRICS_GROUP = "metrics.k8s.io"
USAGE_ANNOTATION = "kcm.dev/simulate-usage"
_WINDOW = "15s"  # metrics-server's default --metric-resolution
_DEFAULT_FRACTION = Decimal("0.1")
_RESOURCES = ("cpu", "memory")

Obj = dict[str, Any]
Usage = dict[str, Decimal]


def _stamp(now: datetime) -> str:
    return now.strftime("%Y-%m-%dT%H:%M:%SZ")


def _quantities(raw: object) -> Usage | None:
    """``{"cpu": "250m", ...}`` as numbers; None when it is not such a mapping."""
    if not isinstance(raw, Mapping):
        return None
    out: Usage = {}
    for key in _RESOURCES:
        if key in raw:
            try:
                out[key] = parse_quantity(raw[key])
            except (TypeError, ValueError):
                return None
    return out


def _requested(container: Mapping[str, Any]) -> Usage:
    requests = (container.get("resources") or {}).get("requests") or {}
    usage: Usage = {}
    for key in _RESOURCES:
        try:
            usage[key] = parse_quantity(requests.get(key, "0")) * _DEFAULT_FRACTION
        except (TypeError, ValueError):
            usage[key] = Decimal(0)
    return usage


def container_usage(pod: Mapping[str, Any]) -> list[tuple[str, Usage]]:
    """Each container's simulated usage (name, cpu and memory in cores and bytes)."""
    containers = [c for c in (pod.get("spec") or {}).get("containers") or () if c.get("name")]
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    declared: object = None
    if USAGE_ANNOTATION in annotations:
        try:
            declared = json.loads(annotations[USAGE_ANNOTATION])
        except ValueError:
            declared = None
    pod_wide = isinstance(declared, Mapping) and any(k in _RESOURCES for k in declared)
    whole = _quantities(declared) if pod_wide else None
    out: list[tuple[str, Usage]] = []
    for c in containers:
        usage = _requested(c)
        if whole is not None:
            usage.update({k: v / len(containers) for k, v in whole.items()})
        elif isinstance(declared, Mapping) and not pod_wide:
            usage.update(_quantities(declared.get(c["name"])) or {})
        out.append((c["name"], usage))
    return out


def _text(usage: Usage) -> dict[str, str]:
    return {
        "cpu": format_quantity(usage.get("cpu", Decimal(0))),
        "memory": format_quantity(usage.get("memory", Decimal(0)), binary=True),
    }


def _running(pod: Mapping[str, Any]) -> bool:
    return bool((pod.get("spec") or {}).get("nodeName")) and (
        (pod.get("status") or {}).get("phase") == "Running"
    )


def _ready(node: Mapping[str, Any]) -> bool:
    conditions = (node.get("status") or {}).get("conditions") or ()
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _meta(obj: Mapping[str, Any], now: str, *, namespaced: bool) -> Obj:
    src = obj.get("metadata") or {}
    meta: Obj = {"name": src.get("name", "")}
    if namespaced:
        meta["namespace"] = src.get("namespace", "")
    meta["creationTimestamp"] = now
    if src.get("labels"):
        meta["labels"] = dict(src["labels"])
    return meta


def _pod_metrics(pod: Mapping[str, Any], now: str) -> Obj:
    return {
        "kind": "PodMetrics",
        "apiVersion": f"{METRICS_GROUP}/v1beta1",
        "metadata": _meta(pod, now, namespaced=True),
        "timestamp": now,
        "window": _WINDOW,
        "containers": [{"name": n, "usage": _text(u)} for n, u in container_usage(pod)],
    }


def _node_usage(store: Store) -> dict[str, Usage]:
    totals: dict[str, Usage] = {}
    for pod in store.items(("", "pods")):
        if not _running(pod):
            continue
        total = totals.setdefault(pod["spec"]["nodeName"], {})
        for _, usage in container_usage(pod):
            for k, v in usage.items():
                total[k] = total.get(k, Decimal(0)) + v
    return totals


def _node_metrics(node: Mapping[str, Any], usage: Usage, now: str) -> Obj:
    return {
        "kind": "NodeMetrics",
        "apiVersion": f"{METRICS_GROUP}/v1beta1",
        "metadata": _meta(node, now, namespaced=False),
        "timestamp": now,
        "window": _WINDOW,
        "usage": _text(usage),
    }


def _selector(text: str) -> LabelSelector | None:
    if not text.strip():
        return None
    try:
        return LabelSelector.parse(text)
    except SelectorParseError as exc:
        raise StatusError.bad_request(exc.detail) from exc


def _all(store: Store, res: Resource, ns: str | None, now: str) -> Iterable[Obj]:
    if res.plural == "pods":
        pods = store.items(("", "pods"), ns)
        return [_pod_metrics(p, now) for p in pods if _running(p)]
    usage = _node_usage(store)
    nodes = [n for n in store.items(("", "nodes")) if _ready(n)]
    return [_node_metrics(n, usage.get(n["metadata"]["name"], {}), now) for n in nodes]


def serve_metrics(
    store: Store, res: Resource, ns: str | None, name: str | None, labels: str, now: datetime
) -> Obj:
    """A GET of PodMetrics or NodeMetrics: one object (``name``), or a list filtered by the
    label selector (``ns`` None: every namespace).

    Raises:
        StatusError: 404 for an object without metrics, 400 for a bad selector.
    """
    stamp = _stamp(now)
    if name is not None:
        for obj in _all(store, res, ns, stamp):
            if obj["metadata"]["name"] == name:
                return obj
        raise StatusError.not_found(res.group, res.plural, name)
    selector = _selector(labels)
    items = sorted(
        (
            o
            for o in _all(store, res, ns, stamp)
            if selector is None or selector.matches(o["metadata"].get("labels") or {})
        ),
        key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]),
    )
    return {
        "kind": res.list_kind,
        "apiVersion": f"{METRICS_GROUP}/v1beta1",
        "metadata": {},
        "items": items,
    }
