"""VolumeAttachments: a create starts unattached (``status.attached: false``), as kube's
status is a struct whose ``attached`` is always written."""

from __future__ import annotations

from ..._store import Obj
from .._base import Strategy
from .._context import Context

__all__ = ["VolumeAttachmentStrategy"]


class VolumeAttachmentStrategy(Strategy):
    """kube-apiserver's ``pkg/registry/storage/volumeattachment`` (its status on create)."""

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        super().prepare_for_create(obj, ctx)
        obj["status"] = {"attached": False}
