"""PriorityClasses: generation 1 on create, and no update changes it."""

from __future__ import annotations

from ..._store import Obj
from .._base import Strategy

__all__ = ["PriorityClassStrategy"]


class PriorityClassStrategy(Strategy):
    """kube-apiserver's ``pkg/registry/scheduling/priorityclass`` (its generation)."""

    manages_generation = True

    def generation_changed(self, new: Obj, old: Obj) -> bool:
        return False
