"""ReplicationControllers: one replica by default."""

from __future__ import annotations

from ..._store import Obj
from .._base import Strategy
from .._context import Context

__all__ = ["ReplicationControllerStrategy"]


class ReplicationControllerStrategy(Strategy):
    """kube-apiserver's ``pkg/registry/core/replicationcontroller`` (its defaults)."""

    manages_generation = True

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        super().prepare_for_create(obj, ctx)
        obj.setdefault("spec", {}).setdefault("replicas", 1)
