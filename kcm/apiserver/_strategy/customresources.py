"""Custom resources: what their CRD version says, as apiextensions-apiserver's
``pkg/registry/customresource`` and its request decoding do.

- Decoding a body prunes the fields the schema does not specify, drops non-nullable nulls,
  keeps only ObjectMeta's fields in ``metadata`` (also of embedded resources), and fills in
  the schema's defaults; reads default (and prune) too, so a default added later shows.
- Validation is the schema's (:mod:`.._crschema`), plus embedded resources, list-type
  uniqueness and the scale subresource's replica paths, on create and every update; ``/status``
  is validated too.
- ``metadata.generation`` moves with any change outside ``metadata`` (status too, unless a
  status subresource keeps it apart). An update must name a resourceVersion (422), no strategic
  merge patch (415), DELETE answers a Status, and a CRD being deleted takes no new objects.
- All versions share one storage and no conversion runs: an object is served with the
  requested ``apiVersion`` and otherwise as stored.
"""

from __future__ import annotations

from typing import Any, ClassVar

from .._crschema import (
    coerce_embedded,
    default,
    prune,
    prune_nulls,
    validate,
    validate_embedded,
    validate_list_types,
)
from .._crschema.defaulting import has_defaults
from .._crschema.objectmeta import coerce_meta
from .._field_errors import Cause, invalid
from .._field_types import FieldType, schema_type
from .._status import StatusError
from .._store import Obj, deep_copy
from ._base import Strategy
from ._context import Context
from ._scale import ScalePaths, ScaleSubresource
from ._subresource import StatusSubresource, Subresource
from .apiextensions.lifecycle import instance_removed

__all__ = ["CustomResourceStrategy"]

_TYPE_META = ("apiVersion", "kind", "metadata")


class CustomResourceStrategy(Strategy):
    """apiextensions-apiserver's ``pkg/registry/customresource``, for one served version."""

    manages_generation = True
    kube_finalizer_names = False
    status_writes_metadata = False
    strategic_merge_patch = False
    allow_unconditional_update = False

    @property
    def schema(self) -> dict[str, Any] | None:
        """The version's ``openAPIV3Schema`` (None: no schema, nothing is checked)."""
        version = self.resource.crd or {}
        schema = (version.get("schema") or {}).get("openAPIV3Schema")
        return schema if isinstance(schema, dict) else None

    # -- decoding --------------------------------------------------------------------------

    def admit_create(self) -> None:
        if self.resource.terminating:
            raise StatusError(
                405,
                "MethodNotAllowed",
                "create not allowed while custom resource definition is terminating",
                details={"group": self.resource.group, "kind": self.resource.plural},
            )

    def decode(self, obj: Obj) -> None:
        _coerce(obj, self.schema)

    def default(self, obj: Obj) -> None:
        """No scheme defaults: the schema's are applied when the body is decoded."""

    def present(self, obj: Obj) -> Obj:
        """The stored object as read in this version: through the storage version's schema
        (pruned, defaulted), then, in another version, pruned by its own (no defaults)."""
        schema, stored = self.schema, self._storage_schema()
        other = stored is not schema
        same_version = obj.get("apiVersion") == self.resource.api_version
        if same_version and not _reshapes(stored) and not (other and _reshapes(schema)):
            return obj
        obj = deep_copy(obj)
        _coerce(obj, stored)
        obj["apiVersion"] = self.resource.api_version
        if other and schema is not None:
            kept = {k: obj[k] for k in _TYPE_META if k in obj}
            prune(obj, schema)
            obj.update(kept)
        return obj

    def _storage_schema(self) -> dict[str, Any] | None:
        storage = self.resource.storage
        if storage is None or storage is self.resource.crd:
            return self.schema
        schema = (storage.get("schema") or {}).get("openAPIV3Schema")
        return schema if isinstance(schema, dict) else None

    # -- validation ------------------------------------------------------------------------

    def validate(self, obj: Obj) -> list[Cause]:
        if self.resource.has_status:  # a create drops status before kube-apiserver validates
            obj = {k: v for k, v in obj.items() if k != "status"}
        return super().validate(obj) + self._schema_causes(obj, scale_spec=True)

    def validate_update(self, new: Obj, old: Obj) -> list[Cause]:
        return super().validate(new) + self._schema_causes(new, scale_spec=True)

    def _schema_causes(self, obj: Obj, *, scale_spec: bool) -> list[Cause]:
        schema = self.schema
        causes = validate(obj, schema)
        scale = self._scale()
        if scale is not None:
            if scale_spec:
                causes += _replicas_causes(obj, scale.get("specReplicasPath", ""))
            causes += _replicas_causes(obj, scale.get("statusReplicasPath", ""))
            causes += _selector_causes(obj, scale.get("labelSelectorPath"))
        causes += validate_embedded(obj, schema)
        causes += validate_list_types(obj, schema)
        return causes

    def _scale(self) -> dict[str, Any] | None:
        version = self.resource.crd or {}
        scale = (version.get("subresources") or {}).get("scale")
        return scale if isinstance(scale, dict) else None

    def field_type(self) -> FieldType:
        return schema_type(self.schema)

    # -- generation ------------------------------------------------------------------------

    def spec_changed(self, new: Obj, old: Obj) -> bool:
        """Anything but metadata (status too: ``/status`` writes are validated)."""
        return _content(new) != _content(old)

    def next_generation(self, new: Obj, old: Obj) -> int:
        generation = int(old["metadata"].get("generation") or 1)
        deleting = new["metadata"].get("deletionTimestamp") and not old["metadata"].get(
            "deletionTimestamp"
        )
        keep = ("status",) if self.resource.has_status else ()
        if _content(new, keep) != _content(old, keep) or deleting:
            generation += 1
        return generation

    def after_delete(self, obj: Obj, ctx: Context) -> None:
        """The last object of a CRD being deleted lets the CRD go."""
        if self.resource.terminating:
            instance_removed(ctx, self.resource.group, self.resource.plural)

    # -- reads and subresources ------------------------------------------------------------

    def selectable_fields(self) -> tuple[str, ...]:
        crd = self.resource.crd or {}
        return tuple(str(f.get("jsonPath", "")) for f in crd.get("selectableFields") or ())

    def scale_paths(self) -> ScalePaths:
        sc = self._scale() or {}
        return ScalePaths(
            sc.get("specReplicasPath", ".spec.replicas").lstrip("."),
            sc.get("statusReplicasPath", ".status.replicas").lstrip("."),
            (sc.get("labelSelectorPath") or "").lstrip("."),
        )

    def subresource(self, name: str) -> Subresource:
        if name == "status" and self.resource.has_status:
            return _CustomResourceStatus(self)
        if name == "scale" and self.resource.has_scale:
            return _CustomResourceScale(self, self.scale_paths())
        return super().subresource(name)


class _CustomResourceStatus(StatusSubresource):
    """``/status``: only status changes, validated against the schema (no spec replicas)."""

    strategy: CustomResourceStrategy

    def validate_update(self, new: Obj, old: Obj) -> list[Cause]:
        return self.strategy._schema_causes(new, scale_spec=False)


class _CustomResourceScale(ScaleSubresource):
    """``/scale``: a Scale's replicas go into the object unchecked; the custom resource's
    validation then refuses a negative count (``.spec.replicas: ... non-negative``)."""

    validates_scale: ClassVar[bool] = False


def _content(obj: Obj, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k != "metadata" and k not in skip}


def _reshapes(schema: dict[str, Any] | None) -> bool:
    """Whether reading through ``schema`` can change a stored object (defaults to fill in, or
    fields to prune); an open schema without defaults cannot."""
    if schema is None:
        return False
    open_root = schema.get("x-kubernetes-preserve-unknown-fields") and not schema.get("properties")
    return not open_root or has_defaults(schema)


def _coerce(obj: Obj, schema: dict[str, Any] | None) -> None:
    """Decoding's ``unstructuredSchemaCoercer`` and defaulter: prune, drop non-nullable nulls,
    coerce embedded ObjectMeta, keep ObjectMeta's fields in ``metadata``, fill in defaults."""
    kept = {k: obj[k] for k in _TYPE_META if k in obj}
    if schema is not None:
        prune(obj, schema)
        prune_nulls(obj, schema)
        coerce_embedded(obj, schema)
    obj.update(kept)
    if isinstance(obj.get("metadata"), dict):
        obj["metadata"] = coerce_meta(obj["metadata"])
    if schema is not None:
        default(obj, schema)


def _path_value(obj: Obj, path: str) -> tuple[Any, bool]:
    cur: Any = obj
    for part in path.lstrip(".").split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None, False
        cur = cur[part]
    return cur, True


def _go_type(value: Any) -> str:
    """Go's ``%T`` of a decoded JSON value."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, str):
        return "string"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, list):
        return "[]interface {}"
    if isinstance(value, dict):
        return "map[string]interface {}"
    return "<nil>"


def _replicas_causes(obj: Obj, path: str) -> list[Cause]:
    """``ValidateScaleSpec``/``ValidateScaleStatus``: the replicas at ``path`` (if set) are a
    non-negative int32."""
    if not path:
        return []
    value, found = _path_value(obj, path)
    if not found:
        return []
    if not isinstance(value, int) or isinstance(value, bool):
        detail = f"{path} accessor error: {value} is of the type {_go_type(value)}, expected int64"
        return [invalid(path, 0, detail)]
    if value < 0:
        return [invalid(path, value, "should be a non-negative integer")]
    if value > 2**31 - 1:
        return [invalid(path, value, f"should be less than or equal to {2**31 - 1}")]
    return []


def _selector_causes(obj: Obj, path: Any) -> list[Cause]:
    if not isinstance(path, str) or not path:
        return []
    value, found = _path_value(obj, path)
    if found and not isinstance(value, str):
        detail = f"{path} accessor error: {value} is of the type {_go_type(value)}, expected string"
        return [invalid(path, "", detail)]
    return []
