"""``ValidateObjectMeta``: the checks every kind's metadata gets, with kube-apiserver's messages.

Name rules per kind come from the kind's strategy; everything else (namespace, generateName,
labels, annotations, finalizers, generation) is the same for every kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kcm.selectors import label_key_errors, label_value_errors

from ._field_errors import Cause, forbidden, invalid, required, too_long
from ._names import NameRule, check_name, dns1123_label

__all__ = ["validate_annotations", "validate_labels", "validate_object_meta"]

_TOTAL_ANNOTATION_SIZE_LIMIT: Final = 256 * 1024


def validate_labels(labels: Any, field: str) -> list[Cause]:
    if not isinstance(labels, Mapping):
        return [invalid(field, labels, "must be a map of string keys to string values")]
    causes: list[Cause] = []
    for key in sorted(labels):
        value = labels[key]
        causes.extend(invalid(field, key, msg) for msg in label_key_errors(key))
        if not isinstance(value, str):
            causes.append(invalid(field, value, "label values must be strings"))
            continue
        causes.extend(invalid(field, value, msg) for msg in label_value_errors(value))
    return causes


def validate_annotations(annotations: Any, field: str) -> list[Cause]:
    if not isinstance(annotations, Mapping):
        return [invalid(field, annotations, "must be a map of string keys to string values")]
    causes: list[Cause] = []
    total = 0
    for key in sorted(annotations):
        causes.extend(invalid(field, key, msg) for msg in label_key_errors(key.lower()))
        value = annotations[key]
        total += len(key) + (len(value) if isinstance(value, str) else 0)
    if total > _TOTAL_ANNOTATION_SIZE_LIMIT:
        causes.append(too_long(field, _TOTAL_ANNOTATION_SIZE_LIMIT))
    return causes


def validate_object_meta(
    obj: Mapping[str, Any], *, name_rule: NameRule, namespaced: bool
) -> list[Cause]:
    """``ValidateObjectMeta`` for a new or updated object (after generateName was resolved).

    Args:
        name_rule: the kind's rule for ``metadata.name`` (and the ``generateName`` prefix).
        namespaced: whether the kind lives in a namespace (``metadata.namespace`` required)
            or not (forbidden).

    Returns:
        the field errors as Status causes, in kube-apiserver's order; empty when valid.
    """
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping):
        return [required("metadata.name", "name or generateName is required")]
    causes: list[Cause] = []
    generate = meta.get("generateName") or ""
    if generate:
        causes.extend(
            invalid("metadata.generateName", generate, msg)
            for msg in check_name(name_rule, generate, prefix=True)
        )
    name = meta.get("name") or ""
    if not name:
        causes.append(required("metadata.name", "name or generateName is required"))
    else:
        causes.extend(invalid("metadata.name", name, msg) for msg in check_name(name_rule, name))
    namespace = meta.get("namespace") or ""
    if namespaced:
        if not namespace:
            causes.append(required("metadata.namespace"))
        else:
            causes.extend(
                invalid("metadata.namespace", namespace, msg) for msg in dns1123_label(namespace)
            )
    elif namespace:
        causes.append(forbidden("metadata.namespace", "not allowed on this type"))
    generation = meta.get("generation")
    if isinstance(generation, int) and generation < 0:
        causes.append(
            invalid("metadata.generation", generation, "must be greater than or equal to 0")
        )
    if meta.get("labels"):
        causes.extend(validate_labels(meta["labels"], "metadata.labels"))
    if meta.get("annotations"):
        causes.extend(validate_annotations(meta["annotations"], "metadata.annotations"))
    for i, finalizer in enumerate(meta.get("finalizers") or ()):
        causes.extend(
            invalid(f"metadata.finalizers[{i}]", finalizer, msg)
            for msg in label_key_errors(str(finalizer))
        )
    return causes
