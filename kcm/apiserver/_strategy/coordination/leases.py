"""Leases: a positive duration and non-negative transitions (``ValidateLeaseSpec``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._field_errors import Cause, invalid
from ..._store import Obj
from .._base import Strategy

__all__ = ["LeaseStrategy"]


class LeaseStrategy(Strategy):
    """kube-apiserver's ``pkg/registry/coordination/lease`` (its validation)."""

    def validate(self, obj: Obj) -> list[Cause]:
        return super().validate(obj) + _validate_spec(obj)

    def validate_update(self, new: Obj, old: Obj) -> list[Cause]:
        return self.validate_metadata_update(new, old) + _validate_spec(new)


def _validate_spec(obj: Obj) -> list[Cause]:
    spec: Mapping[str, Any] = obj.get("spec") or {}
    causes: list[Cause] = []
    duration = spec.get("leaseDurationSeconds")
    if duration is not None and duration <= 0:
        causes.append(invalid("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    transitions = spec.get("leaseTransitions")
    if transitions is not None and transitions < 0:
        causes.append(
            invalid("spec.leaseTransitions", transitions, "must to greater or equal than 0")
        )
    return causes
