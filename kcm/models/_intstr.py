"""IntOrString helpers (``maxSurge: 25%`` and friends)."""

from __future__ import annotations

import re

__all__ = ["scaled_value"]

_PERCENT = re.compile(r"[+-]?[0-9]+%")


def scaled_value(value: int | str, total: int, *, round_up: bool) -> int:
    """Resolve an IntOrString against ``total`` (k8s ``intstr.GetScaledValueFromIntOrPercent``).

    An int is returned as is; ``"25%"`` is 25 % of ``total``, rounded up or down.

    Raises:
        ValueError: a string that is not an integer percentage (``"25"``, ``"x%"``).
    """
    if isinstance(value, bool):
        raise ValueError(f"invalid IntOrString value: {value!r}")
    if isinstance(value, int):
        return value
    if not isinstance(value, str) or not value.endswith("%"):
        raise ValueError(f"invalid IntOrString value {value!r}: a string must be a percentage")
    if _PERCENT.fullmatch(value) is None:
        raise ValueError(f"invalid IntOrString percentage: {value!r}")
    scaled = int(value[:-1]) * total
    # Exact integer ceil/floor of scaled / 100 (Go uses math.Ceil/Floor on float64).
    return -(-scaled // 100) if round_up else scaled // 100
