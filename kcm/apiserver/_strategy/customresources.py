"""Custom resources: what their CRD version says (scale paths, selectable fields), served in
the version asked for, no built-in defaults and no strategic merge patch."""

from __future__ import annotations

from .._store import Obj
from ._base import Strategy
from ._scale import ScalePaths

__all__ = ["CustomResourceStrategy"]


class CustomResourceStrategy(Strategy):
    """apiextensions-apiserver's ``pkg/registry/customresource``, for one served version.

    All versions share one storage and no conversion runs: an object is served with the
    requested ``apiVersion`` and otherwise as stored.
    """

    manages_generation = True
    kube_finalizer_names = False

    return_deleted_object = True
    strategic_merge_patch = False

    def default(self, obj: Obj) -> None:
        """No scheme defaults (CRD schema defaults are not applied)."""

    def present(self, obj: Obj) -> Obj:
        if obj.get("apiVersion") != self.resource.api_version:
            obj = dict(obj)
            obj["apiVersion"] = self.resource.api_version
        return obj

    def selectable_fields(self) -> tuple[str, ...]:
        crd = self.resource.crd or {}
        return tuple(str(f.get("jsonPath", "")) for f in crd.get("selectableFields") or ())

    def scale_paths(self) -> ScalePaths:
        crd = self.resource.crd or {}
        sc = (crd.get("subresources") or {}).get("scale") or {}
        return ScalePaths(
            sc.get("specReplicasPath", ".spec.replicas").lstrip("."),
            sc.get("statusReplicasPath", ".status.replicas").lstrip("."),
            (sc.get("labelSelectorPath") or "").lstrip("."),
        )
