"""A pod's quality-of-service class, as the pod strategy sets ``status.qosClass`` on create.

``Guaranteed``: every container (init containers too) limits CPU and memory, and the pod's
requests equal its limits; ``BestEffort``: nothing requested or limited; else ``Burstable``.
Only CPU and memory count, and only amounts above zero.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any, Final

from kcm.models import parse_quantity

__all__ = ["qos_class"]

_COMPUTE: Final = ("cpu", "memory")


def _positive(resources: Any) -> dict[str, Decimal]:
    out: dict[str, Decimal] = {}
    if not isinstance(resources, Mapping):
        return out
    for name in _COMPUTE:
        value = resources.get(name)
        if value is None:
            continue
        try:
            amount = parse_quantity(value)
        except ValueError:
            continue
        if amount > 0:
            out[name] = amount
    return out


def qos_class(spec: Mapping[str, Any]) -> str:
    """``qos.GetPodQOS`` of a pod spec."""
    requests: dict[str, Decimal] = {}
    limits: dict[str, Decimal] = {}
    guaranteed = True
    for field in ("containers", "initContainers"):
        for container in spec.get(field) or []:
            resources = container.get("resources") or {} if isinstance(container, Mapping) else {}
            for name, amount in _positive(resources.get("requests")).items():
                requests[name] = requests.get(name, Decimal(0)) + amount
            found = _positive(resources.get("limits"))
            for name, amount in found.items():
                limits[name] = limits.get(name, Decimal(0)) + amount
            if set(found) != set(_COMPUTE):
                guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    matched = all(limits.get(name) == amount for name, amount in requests.items())
    if guaranteed and matched and len(requests) == len(limits):
        return "Guaranteed"
    return "Burstable"
