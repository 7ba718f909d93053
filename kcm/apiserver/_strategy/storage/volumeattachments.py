"""VolumeAttachments: a create starts unattached (``status.attached: false``), as kube's
status is a struct whose ``attached`` is always written; the attacher is a CSI driver name."""

from __future__ import annotations

from ..._field_errors import Cause
from ..._store import Obj
from .._base import Strategy
from .._context import Context
from ..core.persistentvolumes import csi_driver_name_causes

__all__ = ["VolumeAttachmentStrategy"]


class VolumeAttachmentStrategy(Strategy):
    """kube-apiserver's ``pkg/registry/storage/volumeattachment`` (its status on create)."""

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        super().prepare_for_create(obj, ctx)
        obj["status"] = {"attached": False}

    def validate(self, obj: Obj) -> list[Cause]:
        # ``ValidateVolumeAttachmentV1``: the v1 API's extra check of ``spec.attacher``.
        attacher = (obj.get("spec") or {}).get("attacher") or ""
        return super().validate(obj) + csi_driver_name_causes("spec.attacher", attacher)
