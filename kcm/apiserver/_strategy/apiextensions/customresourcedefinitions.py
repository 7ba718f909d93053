"""CustomResourceDefinitions: apiextensions-apiserver's ``pkg/registry/customresourcedefinition``.

Decoding applies v1's defaults (``spec.conversion.strategy: None``, ``singular`` and
``listKind`` from the kind). A new CRD's status is empty but for ``storedVersions``; the
controllers of :mod:`.lifecycle` then accept its names and establish it, right after the
write. DELETE only marks the CRD (finalizer, ``Terminating``); the finalizer deletes its
objects and then the CRD.
"""

from __future__ import annotations

from typing import Any

from ..._field_errors import Cause
from ..._store import Obj
from .._base import Strategy
from .._context import Context
from . import lifecycle
from .validation import validate_crd, validate_crd_update

__all__ = ["CustomResourceDefinitionStrategy"]


class CustomResourceDefinitionStrategy(Strategy):
    """apiextensions-apiserver's ``pkg/registry/customresourcedefinition``."""

    allow_unconditional_update = False

    def decode(self, obj: Obj) -> None:
        """``SetDefaults_CustomResourceDefinition``."""
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        names = spec.get("names")
        if isinstance(names, dict) and names.get("kind"):
            names.setdefault("singular", str(names["kind"]).lower())
            names.setdefault("listKind", f"{names['kind']}List")
        if spec.get("conversion") is None:
            spec["conversion"] = {"strategy": "None"}
        status = obj.get("status")
        if isinstance(status, dict) and not status.get("storedVersions"):
            stored = _storage_version(obj)
            if stored:
                status["storedVersions"] = [stored]

    manages_generation = True
    kube_finalizer_names = False

    def validate(self, obj: Obj) -> list[Cause]:
        return validate_crd(_with_create_status(obj))

    def validate_update(self, new: Obj, old: Obj) -> list[Cause]:
        return validate_crd_update(new, old)

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        """The status starts empty (Go's zero value) but for the storage version."""
        super().prepare_for_create(obj, ctx)
        obj["status"] = _create_status(obj)

    def prepare_for_update(self, new: Obj, old: Obj) -> Obj:
        """Status is kept; a new storage version joins ``storedVersions``."""
        new = super().prepare_for_update(new, old)
        stored = _storage_version(new)
        status = new.get("status")
        if stored and isinstance(status, dict):
            versions = list(status.get("storedVersions") or [])
            if stored not in versions:
                status["storedVersions"] = [*versions, stored]
        return new

    def prepare_for_delete(
        self, old: Obj, new: Obj, options: Obj, query: dict[str, str], ctx: Context
    ) -> None:
        if not new["metadata"].get("deletionTimestamp"):  # no grace period, as kube's REST
            new["metadata"]["deletionTimestamp"] = ctx.now()
            lifecycle.mark_terminating(new, ctx.now())

    def next_generation(self, new: Obj, old: Obj) -> int:
        """A spec change bumps it; the deletion does not (kube marks a CRD directly)."""
        generation = int(old["metadata"].get("generation") or 1)
        return generation + 1 if self.spec_changed(new, old) else generation

    def reset_fields(self, subresource: str) -> tuple[tuple[str, ...], ...]:
        if subresource == "status":
            return (("f:metadata",), ("f:spec",))
        return super().reset_fields(subresource)

    def after_write(self, obj: Obj, ctx: Context) -> None:
        ctx.registry.set_crd(obj)
        lifecycle.reconcile(ctx, obj["metadata"]["name"])

    def after_delete(self, obj: Obj, ctx: Context) -> None:
        lifecycle.removed(ctx, obj)


def _storage_version(crd: Obj) -> str:
    for version in (crd.get("spec") or {}).get("versions") or ():
        if isinstance(version, dict) and version.get("storage"):
            return str(version.get("name", ""))
    return ""


def _create_status(crd: Obj) -> dict[str, Any]:
    stored = _storage_version(crd)
    return {
        "conditions": None,
        "acceptedNames": {"plural": "", "kind": ""},
        "storedVersions": [stored] if stored else None,
    }


def _with_create_status(crd: Obj) -> Obj:
    """The CRD as validation sees it on create: PrepareForCreate has reset its status."""
    return {**crd, "status": _create_status(crd)}
