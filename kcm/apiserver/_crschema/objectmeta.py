"""Objects inside objects: ``x-kubernetes-embedded-resource`` (and a custom resource's root).

Such an object is a Kubernetes object of its own: kube-apiserver round-trips its ``metadata``
through ``metav1.ObjectMeta`` (unknown fields and empty values vanish, a null
``creationTimestamp`` too) and requires ``apiVersion`` and ``kind``, with ObjectMeta's checks
on the metadata (names only have to be URL path segments).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .._field_errors import Cause, invalid, required
from .._names import dns1035_label, path_segment
from .._object_meta import validate_object_meta
from .pruning import subschema

__all__ = ["OBJECT_META_FIELDS", "coerce_embedded", "coerce_meta", "validate_embedded"]

OBJECT_META_FIELDS: Final = frozenset(
    {
        "name",
        "generateName",
        "namespace",
        "selfLink",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
        "clusterName",
        "managedFields",
    }
)
"""``metav1.ObjectMeta``'s fields (1.24): every other key of ``metadata`` is dropped."""


def coerce_meta(meta: Any) -> Any:
    """``metadata`` as ``metav1.ObjectMeta`` would keep it: its own fields, without the empty
    (``omitempty``) ones, and without a null ``creationTimestamp``."""
    if not isinstance(meta, Mapping):
        return meta
    return {
        k: v
        for k, v in meta.items()
        if k in OBJECT_META_FIELDS and v is not None and v != "" and v != 0 and v != {} and v != []
    }


def _embedded(schema: Mapping[str, Any] | None) -> bool:
    return bool(schema and schema.get("x-kubernetes-embedded-resource"))


def _items(schema: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    items = schema.get("items") if schema is not None else None
    return items if isinstance(items, Mapping) else None


def coerce_embedded(value: Any, schema: Mapping[str, Any] | None) -> None:
    """Round-trip, in place, the ``metadata`` of every embedded resource in ``value``."""
    if schema is None:
        return
    if isinstance(value, dict):
        if _embedded(schema) and "metadata" in value:
            value["metadata"] = coerce_meta(value["metadata"])
        for key, item in value.items():
            coerce_embedded(item, subschema(schema, key))
    elif isinstance(value, list):
        for item in value:
            coerce_embedded(item, _items(schema))


def validate_embedded(value: Any, schema: Mapping[str, Any] | None, path: str = "") -> list[Cause]:
    """The causes of every embedded resource in ``value`` (apiVersion, kind, metadata)."""
    if schema is None:
        return []
    causes: list[Cause] = []
    if isinstance(value, dict):
        if _embedded(schema):
            causes += _validate_resource(value, path)
        props = schema.get("properties")
        for key in sorted(value):
            if isinstance(props, Mapping) and isinstance(props.get(key), Mapping):
                causes += validate_embedded(value[key], props[key], _child(path, key))
            elif isinstance(schema.get("additionalProperties"), Mapping):
                causes += validate_embedded(
                    value[key], schema["additionalProperties"], f"{path}[{key}]"
                )
    elif isinstance(value, list):
        for i, item in enumerate(value):
            causes += validate_embedded(item, _items(schema), f"{path}[{i}]")
    return causes


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _validate_resource(obj: Mapping[str, Any], path: str) -> list[Cause]:
    """``validateEmbeddedResource``: apiVersion and kind set and well-formed, valid metadata."""
    causes: list[Cause] = []
    api_version_path, kind_path = _child(path, "apiVersion"), _child(path, "kind")
    if "apiVersion" not in obj:
        causes.append(required(api_version_path, "must not be empty"))
    if "kind" not in obj:
        causes.append(required(kind_path, "must not be empty"))
    if "apiVersion" in obj:
        api_version = obj["apiVersion"]
        if not isinstance(api_version, str):
            causes.append(invalid(api_version_path, api_version, "must be a string"))
        elif not api_version:
            causes.append(invalid(api_version_path, api_version, "must not be empty"))
        elif api_version.count("/") > 1:
            causes.append(
                invalid(
                    api_version_path,
                    api_version,
                    f"unexpected GroupVersion string: {api_version}",
                )
            )
    if "kind" in obj:
        kind = obj["kind"]
        if not isinstance(kind, str):
            causes.append(invalid(kind_path, kind, "must be a string"))
        elif not kind:
            causes.append(invalid(kind_path, kind, "must not be empty"))
        elif errs := dns1035_label(kind.lower()):
            message = "may have mixed case, but should otherwise match: " + ",".join(errs)
            causes.append(invalid(kind_path, kind, message))
    meta = obj.get("metadata")
    if isinstance(meta, Mapping):
        named = dict(meta)
        named["name"] = named.get("name") or "fakename"
        prefix = _child(path, "metadata")
        for cause in validate_object_meta(
            {"metadata": named},
            name_rule=path_segment,
            namespaced=bool(named.get("namespace")),
        ):
            cause = dict(cause)
            cause["field"] = prefix + cause["field"].removeprefix("metadata")
            causes.append(cause)
    return causes
