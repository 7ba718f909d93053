"""``LimitRanger``: the LimitRanges of a namespace default and bound what its pods and claims
ask for.

On a pod create, every LimitRange item of type ``Container`` fills the requests
(``defaultRequest``) and limits (``default``) a container lacks, and the pod is annotated
``kubernetes.io/limit-ranger: LimitRanger plugin set: ...``. Then (validate phase) each
container, the pod as a whole (type ``Pod``: containers summed, init containers' maximum)
and a claim's storage request on create or update (type ``PersistentVolumeClaim``) must
respect ``min``, ``max`` and ``maxLimitRequestRatio``: a 403 with kube's texts, several
joined as Go's aggregate error (``[first, second]``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import ROUND_CEILING, Decimal
from typing import Any, Final

from kcm.quota import Quantity

from .._status import StatusError
from .._store import Obj, Store
from .._strategy.core.limitranges import default_limit_range_item
from ._plugin import Attributes, Plugin

__all__ = ["ANNOTATION", "LimitRanger"]

ANNOTATION: Final = "kubernetes.io/limit-ranger"
_LIMIT_RANGES: Final = ("", "limitranges")
_CONTAINER, _POD, _CLAIM = "Container", "Pod", "PersistentVolumeClaim"


def _limit_ranges(store: Store, namespace: str) -> list[Obj]:
    found = store.items(_LIMIT_RANGES, namespace)
    return sorted(found, key=lambda r: r["metadata"]["name"])


def _items(limit_range: Obj) -> list[dict[str, Any]]:
    items = []
    for raw in (limit_range.get("spec") or {}).get("limits") or ():
        item = dict(raw)
        default_limit_range_item(item)
        items.append(item)
    return items


# -- defaults -----------------------------------------------------------------------------


def _merge(
    container: dict[str, Any],
    requests: Mapping[str, Any],
    limits: Mapping[str, Any],
    prefix: str,
    notes: list[str],
) -> None:
    resources = container.setdefault("resources", {})
    set_requests, set_limits = [], []
    for key, value in limits.items():
        if key not in (resources.get("limits") or {}):
            resources.setdefault("limits", {})[key] = value
            set_limits.append(key)
    for key, value in requests.items():
        if key not in (resources.get("requests") or {}):
            resources.setdefault("requests", {})[key] = value
            set_requests.append(key)
    name = container.get("name", "")
    if set_requests:
        notes.append(f"{', '.join(sorted(set_requests))} request for {prefix} {name}")
    if set_limits:
        notes.append(f"{', '.join(sorted(set_limits))} limit for {prefix} {name}")


def _default_pod(limit_range: Obj, pod: Obj) -> None:
    requests: dict[str, Any] = {}
    limits: dict[str, Any] = {}
    for item in _items(limit_range):
        if item.get("type") == _CONTAINER:
            requests.update(item.get("defaultRequest") or {})
            limits.update(item.get("default") or {})
    notes: list[str] = []
    spec = pod.get("spec") or {}
    for container in spec.get("containers") or ():
        _merge(container, requests, limits, "container", notes)
    for container in spec.get("initContainers") or ():
        _merge(container, requests, limits, "init container", notes)
    if notes:
        annotations = pod["metadata"].setdefault("annotations", {})
        annotations[ANNOTATION] = "LimitRanger plugin set: " + "; ".join(notes)


# -- constraints ----------------------------------------------------------------------------

_MAX_MILLI: Final = Decimal((2**63 - 1) // 1000)


def _compared(*quantities: Quantity | None) -> list[Decimal]:
    """Go's ``requestLimitEnforcedValues``: milli-values when every value allows, else whole
    values (each rounded up)."""
    values = [q.value if q is not None else Decimal(0) for q in quantities]
    whole = [v.to_integral_value(rounding=ROUND_CEILING) for v in values]
    if all(w <= _MAX_MILLI for w in whole):
        return [(v * 1000).to_integral_value(rounding=ROUND_CEILING) for v in values]
    return whole


def _minimum(
    kind: str,
    name: str,
    enforced: Quantity,
    requests: dict[str, Quantity],
    limits: dict[str, Quantity],
) -> str | None:
    req, lim = requests.get(name), limits.get(name)
    seen_req, seen_lim, bound = _compared(req, lim, enforced)
    if req is None:
        return f"minimum {name} usage per {kind} is {enforced}.  No request is specified"
    if seen_req < bound:
        return f"minimum {name} usage per {kind} is {enforced}, but request is {req}"
    if lim is not None and seen_lim < bound:
        return f"minimum {name} usage per {kind} is {enforced}, but limit is {lim}"
    return None


def _maximum(
    kind: str,
    name: str,
    enforced: Quantity,
    requests: dict[str, Quantity],
    limits: dict[str, Quantity],
) -> str | None:
    req, lim = requests.get(name), limits.get(name)
    seen_req, seen_lim, bound = _compared(req, lim, enforced)
    if lim is None:
        return f"maximum {name} usage per {kind} is {enforced}.  No limit is specified"
    if seen_lim > bound:
        return f"maximum {name} usage per {kind} is {enforced}, but limit is {lim}"
    if req is not None and seen_req > bound:
        return f"maximum {name} usage per {kind} is {enforced}, but request is {req}"
    return None


def _maximum_request(
    kind: str, name: str, enforced: Quantity, requests: dict[str, Quantity]
) -> str | None:
    req = requests.get(name)
    seen_req, _, bound = _compared(req, None, enforced)
    if req is None:
        return f"maximum {name} usage per {kind} is {enforced}.  No request is specified"
    if seen_req > bound:
        return f"maximum {name} usage per {kind} is {enforced}, but request is {req}"
    return None


def _ratio(
    kind: str,
    name: str,
    enforced: Quantity,
    requests: dict[str, Quantity],
    limits: dict[str, Quantity],
) -> str | None:
    req, lim = requests.get(name), limits.get(name)
    seen_req, seen_lim, _ = _compared(req, lim, enforced)
    head = f"{name} max limit to request ratio per {kind} is {enforced}"
    if req is None or seen_req == 0:
        return f"{head}, but no request is specified or request is 0"
    if lim is None or seen_lim == 0:
        return f"{head}, but no limit is specified or limit is 0"
    ratio = seen_lim / seen_req
    bound = enforced.value.to_integral_value(rounding=ROUND_CEILING)
    if bound <= _MAX_MILLI:
        observed, bound = ratio * 1000, (enforced.value * 1000).to_integral_value(ROUND_CEILING)
    else:
        observed = ratio
    if observed > bound:
        return f"{head}, but provided ratio is {float(ratio):f}"
    return None


def _quantities(raw: Mapping[str, Any] | None) -> dict[str, Quantity]:
    out = {}
    for key, text in (raw or {}).items():
        try:
            out[key] = Quantity.parse(text)
        except (TypeError, ValueError):
            continue
    return out


def _bounded(
    kind: str, item: Mapping[str, Any], requests: dict[str, Quantity], limits: dict[str, Quantity]
) -> list[str]:
    errors: list[str | None] = []
    for name, enforced in sorted(_quantities(item.get("min")).items()):
        errors.append(_minimum(kind, name, enforced, requests, limits))
    for name, enforced in sorted(_quantities(item.get("max")).items()):
        errors.append(_maximum(kind, name, enforced, requests, limits))
    for name, enforced in sorted(_quantities(item.get("maxLimitRequestRatio")).items()):
        errors.append(_ratio(kind, name, enforced, requests, limits))
    return [e for e in errors if e]


def _container_lists(container: Mapping[str, Any]) -> tuple[dict[str, Quantity], ...]:
    resources = container.get("resources") or {}
    return _quantities(resources.get("requests")), _quantities(resources.get("limits"))


def _pod_sum(lists: Iterable[dict[str, Quantity]]) -> dict[str, Quantity]:
    """kube's ``sum``: names every container sets, cpu in milli-units, all as DecimalSI."""
    lists = list(lists)
    out: dict[str, Quantity] = {}
    for name in {n for each in lists for n in each}:
        if all(name in each for each in lists):
            scale = 1000 if name == "cpu" else 1
            total = sum(
                ((each[name].value * scale).to_integral_value(ROUND_CEILING) for each in lists),
                Decimal(0),
            )
            out[name] = Quantity(total / scale)
    return out


def _validate_pod(limit_range: Obj, pod: Obj) -> list[str]:
    spec = pod.get("spec") or {}
    containers = list(spec.get("containers") or ())
    inits = list(spec.get("initContainers") or ())
    errors: list[str] = []
    for item in _items(limit_range):
        if item.get("type") == _CONTAINER:
            for container in containers + inits:
                errors += _bounded(_CONTAINER, item, *_container_lists(container))
        if item.get("type") == _POD:
            requests = _pod_sum(_container_lists(c)[0] for c in containers)
            limits = _pod_sum(_container_lists(c)[1] for c in containers)
            for container in inits:
                init_requests, init_limits = _container_lists(container)
                for name, value in init_requests.items():
                    if name not in requests or value > requests[name]:
                        requests[name] = value
                for name, value in init_limits.items():
                    if name not in limits or value > limits[name]:
                        limits[name] = value
            errors += _bounded(_POD, item, requests, limits)
    return errors


def _validate_claim(limit_range: Obj, claim: Obj) -> list[str]:
    requests = _quantities(((claim.get("spec") or {}).get("resources") or {}).get("requests"))
    errors: list[str | None] = []
    for item in _items(limit_range):
        if item.get("type") != _CLAIM:
            continue
        for name, enforced in sorted(_quantities(item.get("min")).items()):
            errors.append(_minimum(_CLAIM, name, enforced, requests, {}))
        for name, enforced in sorted(_quantities(item.get("max")).items()):
            errors.append(_maximum_request(_CLAIM, name, enforced, requests))
    return [e for e in errors if e]


def _aggregate(errors: list[str]) -> str:
    """Go's ``utilerrors.NewAggregate(...).Error()``: one message, or ``[a, b]`` (repeats
    dropped)."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


class LimitRanger(Plugin):
    """The plugin: defaults on pod creates, bounds on pod creates and claim writes."""

    name = "LimitRanger"

    @staticmethod
    def _applies(a: Attributes) -> bool:
        if a.subresource or a.resource.group != "":
            return False
        if a.resource.kind == "Pod":
            return a.operation == "CREATE"
        return a.resource.kind == "PersistentVolumeClaim"

    def admit(self, a: Attributes) -> None:
        if self._applies(a) and a.is_pod:
            for limit_range in _limit_ranges(a.store, a.namespace):
                _default_pod(limit_range, a.obj)

    def validate(self, a: Attributes) -> None:
        if not self._applies(a):
            return
        if a.old is not None and (a.old.get("metadata") or {}).get("deletionTimestamp"):
            return
        check = _validate_pod if a.is_pod else _validate_claim
        for limit_range in _limit_ranges(a.store, a.namespace):
            errors = check(limit_range, a.obj)
            if errors:
                why = _aggregate(errors)
                raise StatusError.forbidden(a.resource.group, a.resource.plural, a.name, why)
