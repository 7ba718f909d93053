"""``ValidateObjectMeta`` and ``ValidateObjectMetaUpdate``: the checks every kind's metadata
gets, with kube-apiserver's messages and field paths.

Name rules per kind come from the kind's strategy; everything else (namespace, generateName,
labels, annotations, ownerReferences, finalizers, generation, what an update may not change)
is the same for every kind. The kinds of the Kubernetes API (not custom resources) also refuse
finalizer names that are neither qualified (``example.com/f``) nor standard (``kubernetes``,
``orphan``, ``foregroundDeletion``): ``kube_finalizers``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final

from kcm.selectors import label_key_errors, label_value_errors

from ._field_errors import Cause, forbidden, go_value, invalid, invalid_shown, required, too_long
from ._names import NameRule, check_name, dns1123_label

__all__ = [
    "validate_annotations",
    "validate_labels",
    "validate_object_meta",
    "validate_object_meta_update",
]

_TOTAL_ANNOTATION_SIZE_LIMIT: Final = 256 * 1024
_STANDARD_FINALIZERS: Final = frozenset({"kubernetes", "orphan", "foregroundDeletion"})
_BANNED_OWNERS: Final = frozenset({("v1", "Event")})
_FAKE_POINTER: Final = "0xc000010000"
"""Go prints a set pointer as its address; any address reads the same once normalised."""


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
        total += len(key.encode()) + (len(value.encode()) if isinstance(value, str) else 0)
    if total > _TOTAL_ANNOTATION_SIZE_LIMIT:
        causes.append(too_long(field, _TOTAL_ANNOTATION_SIZE_LIMIT))
    return causes


def _go_bool_pointer(value: Any) -> str:
    return "(*bool)(nil)" if value is None else f"(*bool)({_FAKE_POINTER})"


def _go_owner_reference(ref: Mapping[str, Any]) -> str:
    """An OwnerReference as Go's ``%#v`` prints it."""
    return (
        f"v1.OwnerReference{{APIVersion:{go_value(ref.get('apiVersion') or '')}, "
        f"Kind:{go_value(ref.get('kind') or '')}, Name:{go_value(ref.get('name') or '')}, "
        f"UID:{go_value(ref.get('uid') or '')}, "
        f"Controller:{_go_bool_pointer(ref.get('controller'))}, "
        f"BlockOwnerDeletion:{_go_bool_pointer(ref.get('blockOwnerDeletion'))}}}"
    )


def _validate_owner_references(refs: Any) -> list[Cause]:
    """``ValidateOwnerReferences``: the parts every reference needs (paths without an
    index, as kube-apiserver writes them), no Event owners, one controller at most."""
    field = "metadata.ownerReferences"
    if not isinstance(refs, list):
        return []
    causes: list[Cause] = []
    controller = ""
    for ref in refs:
        if not isinstance(ref, Mapping):
            continue
        api_version = str(ref.get("apiVersion") or "")
        version = api_version.rsplit("/", 1)[-1]
        if not version:
            causes.append(invalid(f"{field}.apiVersion", api_version, "version must not be empty"))
        if not ref.get("kind"):
            causes.append(invalid(f"{field}.kind", ref.get("kind") or "", "kind must not be empty"))
        if not ref.get("name"):
            causes.append(invalid(f"{field}.name", ref.get("name") or "", "name must not be empty"))
        if not ref.get("uid"):
            causes.append(invalid(f"{field}.uid", ref.get("uid") or "", "uid must not be empty"))
        if (api_version, ref.get("kind")) in _BANNED_OWNERS:
            shown = _go_owner_reference(ref)
            group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
            causes.append(
                invalid_shown(
                    field,
                    shown,
                    f"{group}/{version}, Kind={ref.get('kind')} is disallowed from being an owner",
                )
            )
        if ref.get("controller") is True:
            if controller:
                shown = (
                    "[]v1.OwnerReference{"
                    + ", ".join(_go_owner_reference(r) for r in refs if isinstance(r, Mapping))
                    + "}"
                )
                causes.append(
                    invalid_shown(
                        field,
                        shown,
                        'Only one reference can have Controller set to true. Found "true" in '
                        f"references for {controller} and {ref.get('name')}",
                    )
                )
            else:
                controller = str(ref.get("name") or "")
    return causes


def _validate_finalizers(finalizers: Any) -> list[Cause]:
    """``ValidateFinalizers``: qualified names, not orphan and foregroundDeletion together."""
    field = "metadata.finalizers"
    names = [str(f) for f in finalizers] if isinstance(finalizers, list) else []
    causes: list[Cause] = []
    for name in names:
        causes.extend(invalid(field, name, msg) for msg in label_key_errors(name))
    if "orphan" in names and "foregroundDeletion" in names:
        causes.append(
            invalid_shown(
                field,
                go_value(names),
                "finalizer orphan and foregroundDeletion cannot be both set",
            )
        )
    return causes


def _kube_finalizer_names(names: list[str]) -> list[Cause]:
    """``validateKubeFinalizerName``: a name without a ``/`` must be a standard one."""
    return [
        invalid(
            f"metadata.finalizers[{i}]",
            name,
            "name is neither a standard finalizer name nor is it fully qualified",
        )
        for i, name in enumerate(names)
        if "/" not in name and name not in _STANDARD_FINALIZERS
    ]


def validate_object_meta(
    obj: Mapping[str, Any], *, name_rule: NameRule, namespaced: bool, kube_finalizers: bool = True
) -> list[Cause]:
    """``ValidateObjectMeta`` for a new or updated object (after generateName was resolved).

    Args:
        name_rule: the kind's rule for ``metadata.name`` (and the ``generateName`` prefix).
        namespaced: whether the kind lives in a namespace (``metadata.namespace`` required)
            or not (forbidden).
        kube_finalizers: also check finalizer names as the Kubernetes API's kinds do.

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
    causes.extend(_labels_annotations_owners(meta))
    causes.extend(_validate_finalizers(meta.get("finalizers")))
    if kube_finalizers:
        causes.extend(_kube_finalizer_names(_names(meta.get("finalizers"))))
    return causes


def _names(finalizers: Any) -> list[str]:
    return [str(f) for f in finalizers] if isinstance(finalizers, list) else []


def _labels_annotations_owners(meta: Mapping[str, Any]) -> list[Cause]:
    causes: list[Cause] = []
    if meta.get("labels"):
        causes.extend(validate_labels(meta["labels"], "metadata.labels"))
    if meta.get("annotations"):
        causes.extend(validate_annotations(meta["annotations"], "metadata.annotations"))
    causes.extend(_validate_owner_references(meta.get("ownerReferences")))
    return causes


def _go_time(value: Any) -> str:
    """A ``metav1.Time`` as Go's ``String()`` prints it (``2001-02-03 04:05:06 +0000 UTC``)."""
    if not value:
        return "null"
    try:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return go_value(value)
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S +0000 UTC")


def _immutable(field: str, new: Any, old: Any, shown: str) -> list[Cause]:
    if new == old:
        return []
    return [invalid_shown(field, shown, "field is immutable")]


def validate_object_meta_update(
    new: Mapping[str, Any], old: Mapping[str, Any], *, kube_finalizers: bool = True
) -> list[Cause]:
    """``ValidateObjectMetaUpdate``: what an update may not do to metadata (add finalizers to
    an object being deleted, change name, namespace, uid or the deletion fields), plus the
    label, annotation and ownerReference rules of the new metadata."""
    meta: Mapping[str, Any] = new.get("metadata") or {}
    before: Mapping[str, Any] = old.get("metadata") or {}
    causes: list[Cause] = []
    if before.get("deletionTimestamp"):
        added = sorted(set(_names(meta.get("finalizers"))) - set(_names(before.get("finalizers"))))
        if added:
            causes.append(
                forbidden(
                    "metadata.finalizers",
                    "no new finalizers can be added if the object is being deleted, found new "
                    f"finalizers {go_value(added)}",
                )
            )
    if not meta.get("resourceVersion"):
        causes.append(invalid("metadata.resourceVersion", "", "must be specified for an update"))
    generation, previous = meta.get("generation") or 0, before.get("generation") or 0
    if isinstance(generation, int) and isinstance(previous, int) and generation < previous:
        causes.append(invalid("metadata.generation", generation, "must not be decremented"))
    for key in ("name", "namespace", "uid"):
        value = meta.get(key) or ""
        causes.extend(_immutable(f"metadata.{key}", value, before.get(key) or "", go_value(value)))
    for key in ("creationTimestamp", "deletionTimestamp"):
        value = meta.get(key)
        causes.extend(_immutable(f"metadata.{key}", value, before.get(key), _go_time(value)))
    grace = meta.get("deletionGracePeriodSeconds")
    causes.extend(
        _immutable(
            "metadata.deletionGracePeriodSeconds",
            grace,
            before.get("deletionGracePeriodSeconds"),
            "null" if grace is None else go_value(grace),
        )
    )
    causes.extend(_labels_annotations_owners(meta))
    if kube_finalizers:
        causes.extend(_kube_finalizer_names(_names(meta.get("finalizers"))))
    return causes
