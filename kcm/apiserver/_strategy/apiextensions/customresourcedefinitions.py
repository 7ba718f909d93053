"""CustomResourceDefinitions: checked names and versions, accepted at once, and served.

A created or updated CRD is served (or stops being served) right away, and deleting it deletes
its objects: what apiextensions-apiserver's controllers do asynchronously happens here inline.
"""

from __future__ import annotations

from ..._field_errors import Cause
from ..._store import Obj, deep_copy
from .._base import Strategy
from .._context import Context

__all__ = ["CustomResourceDefinitionStrategy"]


class CustomResourceDefinitionStrategy(Strategy):
    """apiextensions-apiserver's ``pkg/registry/customresourcedefinition``, in brief."""

    manages_generation = True
    kube_finalizer_names = False

    def validate(self, obj: Obj) -> list[Cause]:
        return super().validate(obj) + _crd_causes(obj)

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        super().prepare_for_create(obj, ctx)
        spec = obj.get("spec") or {}
        for version in spec.get("versions") or []:
            if isinstance(version, dict):
                version.setdefault("served", True)
        names = dict(spec.get("names") or {})
        names.setdefault("singular", names.get("kind", "").lower())
        names.setdefault("listKind", f"{names.get('kind', '')}List")
        obj["status"] = {
            "acceptedNames": names,
            "conditions": _accepted_conditions(ctx.now()),
            "storedVersions": [
                v.get("name") for v in spec.get("versions") or [] if v.get("storage")
            ],
        }

    def after_write(self, obj: Obj, ctx: Context) -> None:
        ctx.registry.set_crd(obj)

    def after_delete(self, obj: Obj, ctx: Context) -> None:
        spec = obj.get("spec") or {}
        group = spec.get("group", "")
        plural = (spec.get("names") or {}).get("plural", "")
        bucket = ctx.store.objects.get((group, plural), {})
        cr_res = ctx.registry.by_storage(group, plural)
        if cr_res is not None:
            for cr in list(bucket.values()):
                ctx.store.delete(cr_res.storage_key, deep_copy(cr), cr)
        ctx.registry.drop_crd(obj["metadata"]["name"])


def _accepted_conditions(now: str) -> list[Obj]:
    return [
        {
            "type": "NamesAccepted",
            "status": "True",
            "reason": "NoConflicts",
            "message": "no conflicts found",
            "lastTransitionTime": now,
        },
        {
            "type": "Established",
            "status": "True",
            "reason": "InitialNamesAccepted",
            "message": "the initial names have been accepted",
            "lastTransitionTime": now,
        },
    ]


def _crd_causes(obj: Obj) -> list[Cause]:
    spec = obj.get("spec") or {}
    names = spec.get("names") or {}
    causes: list[Cause] = []
    expected = f"{names.get('plural', '')}.{spec.get('group', '')}"
    if obj["metadata"].get("name") != expected:
        causes.append(
            {
                "reason": "FieldValueInvalid",
                "message": f'Invalid value: "{obj["metadata"].get("name")}": must be '
                'spec.names.plural+"."+spec.group',
                "field": "metadata.name",
            }
        )
    if not names.get("kind") or not names.get("plural"):
        causes.append(
            {
                "reason": "FieldValueRequired",
                "message": "Required value",
                "field": "spec.names.kind" if not names.get("kind") else "spec.names.plural",
            }
        )
    versions = spec.get("versions") or []
    if not versions:
        causes.append(
            {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.versions"}
        )
    elif sum(1 for v in versions if v.get("storage")) != 1:
        causes.append(
            {
                "reason": "FieldValueInvalid",
                "message": "Invalid value: must have exactly one version marked as storage version",
                "field": "spec.versions",
            }
        )
    return causes
