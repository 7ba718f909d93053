"""Deployments: replicas, history, deadline and rolling-update defaults, and the strategy's
validation."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from ..._field_errors import Cause, forbidden, invalid, invalid_shown, not_supported, required
from ..._store import Obj
from .workloads import WorkloadStrategy

__all__ = ["DeploymentStrategy"]

_PERCENT: Final = re.compile(r"^[0-9]+%$")
_NON_NEGATIVE: Final = "must be greater than or equal to 0"


class DeploymentStrategy(WorkloadStrategy):
    """kube-apiserver's ``pkg/registry/apps/deployment`` (defaults and validation)."""

    status_zero = {}
    status_omitempty = (
        "observedGeneration",
        "replicas",
        "updatedReplicas",
        "readyReplicas",
        "availableReplicas",
        "unavailableReplicas",
    )
    status_keeps_metadata = ("labels",)

    def default(self, obj: Obj) -> None:
        """``SetDefaults_Deployment``."""
        super().default(obj)
        spec = obj.setdefault("spec", {})
        spec.setdefault("replicas", 1)
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)
        strategy = spec.get("strategy")
        if not isinstance(strategy, dict):
            strategy = spec["strategy"] = {}
        if not strategy.get("type"):
            strategy["type"] = "RollingUpdate"
        if strategy["type"] == "RollingUpdate":
            rolling = strategy.get("rollingUpdate")
            if not isinstance(rolling, dict):
                rolling = strategy["rollingUpdate"] = {}
            rolling.setdefault("maxUnavailable", "25%")
            rolling.setdefault("maxSurge", "25%")

    def validate_spec(self, obj: Obj) -> list[Cause]:
        spec: Mapping[str, Any] = obj.get("spec") or {}
        causes = super().validate_spec(obj)
        causes += _validate_strategy(spec.get("strategy") or {})
        min_ready = spec.get("minReadySeconds") or 0
        if min_ready < 0:
            causes.append(invalid("spec.minReadySeconds", min_ready, _NON_NEGATIVE))
        history = spec.get("revisionHistoryLimit")
        if history is not None and history < 0:
            causes.append(invalid("spec.revisionHistoryLimit", history, _NON_NEGATIVE))
        deadline = spec.get("progressDeadlineSeconds")
        if deadline is not None:
            if deadline < 0:
                causes.append(invalid("spec.progressDeadlineSeconds", deadline, _NON_NEGATIVE))
            if deadline <= min_ready:
                causes.append(
                    invalid(
                        "spec.progressDeadlineSeconds",
                        deadline,
                        "must be greater than minReadySeconds",
                    )
                )
        return causes

    def generation_changed(self, new: Obj, old: Obj) -> bool:
        """The spec or the annotations changed (a rollback request was one, once)."""
        annotations_changed = new["metadata"].get("annotations") != old["metadata"].get(
            "annotations"
        )
        return annotations_changed or super().generation_changed(new, old)


def _go_int_or_string(value: Any) -> str:
    """An IntOrString as Go's ``%#v`` prints it."""
    if isinstance(value, str):
        return f'intstr.IntOrString{{Type:1, IntVal:0, StrVal:"{value}"}}'
    return f'intstr.IntOrString{{Type:0, IntVal:{value}, StrVal:""}}'


def _int_or_percent(value: Any, field: str) -> list[Cause]:
    """``ValidatePositiveIntOrPercent`` and ``IsNotMoreThan100Percent`` (for maxUnavailable)."""
    if isinstance(value, str):
        if not _PERCENT.match(value):
            return [
                invalid_shown(
                    field,
                    _go_int_or_string(value),
                    "a valid percent string must be a numeric string followed by an ending '%' "
                    "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
                )
            ]
        return []
    if isinstance(value, int) and value < 0:
        return [invalid(field, value, _NON_NEGATIVE)]
    return []


def _amount(value: Any) -> int:
    if isinstance(value, str) and _PERCENT.match(value):
        return int(value[:-1])
    return value if isinstance(value, int) else 0


def _validate_strategy(strategy: Mapping[str, Any]) -> list[Cause]:
    """``ValidateDeploymentStrategy``."""
    kind = strategy.get("type")
    rolling = strategy.get("rollingUpdate")
    if kind == "Recreate":
        if rolling is not None:
            return [
                forbidden(
                    "spec.strategy.rollingUpdate",
                    "may not be specified when strategy `type` is 'Recreate'",
                )
            ]
        return []
    if kind == "RollingUpdate":
        if not isinstance(rolling, Mapping):
            return [
                required("spec.strategy.rollingUpdate", "this should be defaulted and never be nil")
            ]
        path = "spec.strategy.rollingUpdate"
        unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
        causes = _int_or_percent(unavailable, f"{path}.maxUnavailable")
        causes += _int_or_percent(surge, f"{path}.maxSurge")
        if _amount(unavailable) == 0 and _amount(surge) == 0:
            causes.append(
                invalid_shown(
                    f"{path}.maxUnavailable",
                    _go_int_or_string(unavailable or 0),
                    "may not be 0 when `maxSurge` is 0",
                )
            )
        if (
            isinstance(unavailable, str)
            and _PERCENT.match(unavailable)
            and _amount(unavailable) > 100
        ):
            causes.append(
                invalid_shown(
                    f"{path}.maxUnavailable",
                    _go_int_or_string(unavailable),
                    "must not be greater than 100%",
                )
            )
        return causes
    return [not_supported("spec.strategy", kind, ["Recreate", "RollingUpdate"])]
