"""Strategic merge patch (``application/strategic-merge-patch+json``) for the built-in kinds.

A port of ``k8s.io/apimachinery/pkg/util/strategicpatch`` (``StrategicMergeMapPatch`` with
``MergeParallelList`` and ``IgnoreUnmatchedNulls``, as kube-apiserver calls it):

* Maps merge recursively; ``null`` deletes a key (a ``null`` for a key that is not there is
  dropped).
* Lists with ``patchStrategy:"merge"`` merge: lists of objects by their ``patchMergeKey``
  (``containers`` by ``name``, ``ports`` by ``containerPort`` ...), lists of scalars as sets
  (``finalizers``). Every other list is replaced whole. Merged lists are ordered as Go orders
  them (``normalizeElementOrder``): server-only items keep their relative order, items named
  by the patch follow the patch's order, and an item new to the list is placed *before* the
  server-only items unless ``$setElementOrder`` says otherwise, exactly as kube-apiserver.
* Unlike Go, directives inside a value that is new to the object are interpreted rather than
  stored verbatim (Go would persist a stray ``$patch`` key there).
* Directives: ``$patch: replace|delete`` on a map, ``{"$patch": "delete", <key>: v}`` and
  ``{"$patch": "replace"}`` items in a merging list, ``$retainKeys``, ``$setElementOrder/<f>``
  and ``$deleteFromPrimitiveList/<f>`` (what kubectl apply and kubectl patch send).

The table of patch strategies (:data:`_TYPES`) was transcribed from the ``patchStrategy`` /
``patchMergeKey`` struct tags of ``k8s.io/api`` v1.32 (core/v1, apps/v1, batch/v1,
autoscaling/v2, policy/v1) for every field on the path to a tagged list. Fields it does not
list behave as untagged Go fields: objects merge, lists are atomic. Custom resources have no
Go struct, and kube-apiserver refuses strategic merge for them with 415; see
:func:`supports_strategic`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, NamedTuple

from ._patch import PatchError, json_copy

__all__ = [
    "UNSUPPORTED_MEDIA_TYPE_MESSAGE",
    "FieldInfo",
    "apply_strategic_merge_patch",
    "field_info",
    "root_type",
    "supports_strategic",
]

UNSUPPORTED_MEDIA_TYPE_MESSAGE: Final = (
    "the body of the request was in an unknown format - accepted media types include: "
    "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
)
"""kube-apiserver's 415 message for a strategic merge patch of a custom resource."""

_DIRECTIVE: Final = "$patch"
_RETAIN_KEYS: Final = "$retainKeys"
_SET_ORDER: Final = "$setElementOrder/"
_DELETE_PRIMITIVE: Final = "$deleteFromPrimitiveList/"


class FieldInfo(NamedTuple):
    """Patch metadata of one struct field.

    Attributes:
        strategy: the Go ``patchStrategy`` tag (``merge``, ``retainKeys``, ``merge,retainKeys``,
            ``replace`` or ``""``).
        merge_key: the ``patchMergeKey`` tag of a list of objects (``""`` for scalars).
        type: the table name of the value's (or list item's) struct type, ``""`` if untracked.
    """

    strategy: str = ""
    merge_key: str = ""
    type: str = ""

    @property
    def merges(self) -> bool:
        """Whether a list under this field merges (rather than being replaced whole)."""
        return "merge" in self.strategy.split(",")


_F = FieldInfo
_CONDITIONS: Final = _F("merge", "type")

# Struct type -> json field -> patch metadata; see the module docstring for the source.
_TYPES: Final[dict[str, dict[str, FieldInfo]]] = {
    "ObjectMeta": {
        "finalizers": _F("merge"),
        "ownerReferences": _F("merge", "uid"),
    },
    "PodTemplateSpec": {"metadata": _F(type="ObjectMeta"), "spec": _F(type="PodSpec")},
    "PodSpec": {
        "volumes": _F("merge,retainKeys", "name"),
        "initContainers": _F("merge", "name", "Container"),
        "containers": _F("merge", "name", "Container"),
        "ephemeralContainers": _F("merge", "name", "Container"),
        "imagePullSecrets": _F("merge", "name"),
        "hostAliases": _F("merge", "ip"),
        "topologySpreadConstraints": _F("merge", "topologyKey"),
        "resourceClaims": _F("merge,retainKeys", "name"),
        "schedulingGates": _F("merge", "name"),
    },
    "Container": {
        "ports": _F("merge", "containerPort"),
        "env": _F("merge", "name"),
        "volumeMounts": _F("merge", "mountPath"),
        "volumeDevices": _F("merge", "devicePath"),
    },
    "PodStatus": {
        "conditions": _CONDITIONS,
        "podIPs": _F("merge", "ip"),
        "hostIPs": _F("merge", "ip"),
        "resourceClaimStatuses": _F("merge,retainKeys", "name"),
    },
    "ConditionsStatus": {"conditions": _CONDITIONS},
    "TemplateSpec": {"template": _F(type="PodTemplateSpec")},
    "DeploymentSpec": {
        "template": _F(type="PodTemplateSpec"),
        "strategy": _F("retainKeys"),
    },
    "JobTemplateSpec": {"metadata": _F(type="ObjectMeta"), "spec": _F(type="TemplateSpec")},
    "CronJobSpec": {"jobTemplate": _F(type="JobTemplateSpec")},
    "ServiceSpec": {"ports": _F("merge", "port")},
    "NodeSpec": {"podCIDRs": _F("merge")},
    "NodeStatus": {"conditions": _CONDITIONS, "addresses": _F("merge", "type")},
    # top-level kinds
    "Object": {"metadata": _F(type="ObjectMeta")},
    "Pod": {
        "metadata": _F(type="ObjectMeta"),
        "spec": _F(type="PodSpec"),
        "status": _F(type="PodStatus"),
    },
    "PodTemplate": {"metadata": _F(type="ObjectMeta"), "template": _F(type="PodTemplateSpec")},
    "Workload": {
        "metadata": _F(type="ObjectMeta"),
        "spec": _F(type="TemplateSpec"),
        "status": _F(type="ConditionsStatus"),
    },
    "Deployment": {
        "metadata": _F(type="ObjectMeta"),
        "spec": _F(type="DeploymentSpec"),
        "status": _F(type="ConditionsStatus"),
    },
    "CronJob": {"metadata": _F(type="ObjectMeta"), "spec": _F(type="CronJobSpec")},
    "WithConditions": {
        "metadata": _F(type="ObjectMeta"),
        "status": _F(type="ConditionsStatus"),
    },
    "Service": {
        "metadata": _F(type="ObjectMeta"),
        "spec": _F(type="ServiceSpec"),
        "status": _F(type="ConditionsStatus"),
    },
    "Node": {
        "metadata": _F(type="ObjectMeta"),
        "spec": _F(type="NodeSpec"),
        "status": _F(type="NodeStatus"),
    },
    "ServiceAccount": {"metadata": _F(type="ObjectMeta"), "secrets": _F("merge", "name")},
}

_KINDS: Final[dict[tuple[str, str], str]] = {
    ("", "Pod"): "Pod",
    ("", "PodTemplate"): "PodTemplate",
    ("", "ReplicationController"): "Workload",
    ("", "Service"): "Service",
    ("", "Node"): "Node",
    ("", "Namespace"): "WithConditions",
    ("", "PersistentVolumeClaim"): "WithConditions",
    ("", "ServiceAccount"): "ServiceAccount",
    ("apps", "Deployment"): "Deployment",
    ("apps", "ReplicaSet"): "Workload",
    ("apps", "DaemonSet"): "Workload",
    ("apps", "StatefulSet"): "Workload",
    ("batch", "Job"): "Workload",
    ("batch", "CronJob"): "CronJob",
    ("autoscaling", "HorizontalPodAutoscaler"): "WithConditions",
    ("policy", "PodDisruptionBudget"): "WithConditions",
}

# API groups served by kube-apiserver's own Go types (strategic merge works for every kind in
# them); anything else is a custom resource (or an aggregated API).
_BUILTIN_GROUPS: Final = frozenset(
    {
        "",
        "admissionregistration.k8s.io",
        "apiextensions.k8s.io",
        "apiregistration.k8s.io",
        "apps",
        "authentication.k8s.io",
        "authorization.k8s.io",
        "autoscaling",
        "batch",
        "certificates.k8s.io",
        "coordination.k8s.io",
        "discovery.k8s.io",
        "events.k8s.io",
        "flowcontrol.apiserver.k8s.io",
        "internal.apiserver.k8s.io",
        "networking.k8s.io",
        "node.k8s.io",
        "policy",
        "rbac.authorization.k8s.io",
        "resource.k8s.io",
        "scheduling.k8s.io",
        "storage.k8s.io",
        "storagemigration.k8s.io",
    }
)
_NO_FIELDS: Final[dict[str, FieldInfo]] = {}
_UNTRACKED: Final = FieldInfo()


def supports_strategic(group: str, kind: str) -> bool:
    """Whether kube-apiserver accepts a strategic merge patch for the kind (else 415)."""
    return group in _BUILTIN_GROUPS


def root_type(group: str, kind: str) -> str | None:
    """The table type of a kind's top level: a built-in's, or None for a custom resource."""
    if group not in _BUILTIN_GROUPS:
        return None
    return _KINDS.get((group, kind), "Object")


def field_info(type_name: str, field: str) -> FieldInfo:
    """Patch metadata of ``field`` in table type ``type_name`` (untagged if not listed)."""
    return _TYPES.get(type_name, _NO_FIELDS).get(field, _UNTRACKED)


# --------------------------------------------------------------------------------------------
# The merge
# --------------------------------------------------------------------------------------------


def _go(value: Any) -> str:
    """Go's ``%v`` of a decoded JSON value (maps print as ``map[k:v]`` with sorted keys)."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(_go(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _bad(message: str) -> PatchError:
    return PatchError(message, code=400)


def _discard_nulls(value: Any) -> Any:
    """A clean copy of a patch value with null map members and directives dropped."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if v is None or k in (_DIRECTIVE, _RETAIN_KEYS):
                continue
            if k.startswith(_SET_ORDER) or k.startswith(_DELETE_PRIMITIVE):
                continue
            out[k] = _discard_nulls(v)
        return out
    if isinstance(value, list):
        return [
            _discard_nulls(v)
            for v in value
            if not (isinstance(v, dict) and v.get(_DIRECTIVE) in ("delete", "replace"))
        ]
    return value


def _new_value(patch_value: Any, info: FieldInfo) -> Any:
    """The value for a key the original lacks: the patch merged into nothing."""
    if isinstance(patch_value, dict):
        return _merge_map({}, patch_value, info.type)
    if isinstance(patch_value, list):
        if info.merges and patch_value and isinstance(patch_value[0], dict):
            return _merge_list([], patch_value, info, delete_list=False)
        return _discard_nulls(patch_value)
    return patch_value


def _merge_map(original: dict[str, Any], patch: Mapping[str, Any], type_name: str) -> Any:
    """``mergeMap``: merge ``patch`` into ``original`` (which it may modify) and return it."""
    if _DIRECTIVE in patch:
        directive = patch[_DIRECTIVE]
        if directive == "replace":
            return _discard_nulls({k: v for k, v in patch.items() if k != _DIRECTIVE})
        if directive == "delete":
            return {}
        raise _bad(f"unknown patch type: {directive} in map: {_go(patch)}")
    if _RETAIN_KEYS in patch:
        retain = patch[_RETAIN_KEYS]
        if not isinstance(retain, list):
            raise _bad("invalid patch: the list of $retainKeys should be a list")
        keep = set(retain)
        for key in list(original):
            if key not in keep:
                del original[key]
        for key in patch:
            if key.startswith("$"):
                continue
            if key not in keep:
                raise _bad(
                    f"doesn't match with $retainKeys: the key {key!r} is in the patch but "
                    "not in $retainKeys"
                )
    handled: set[str] = set()
    for key, order in patch.items():
        if key.startswith(_SET_ORDER):
            field = key[len(_SET_ORDER) :]
            _apply_set_order(original, patch, field, order, field_info(type_name, field))
            handled.add(field)
    for key, value in patch.items():
        if key in handled or key == _RETAIN_KEYS or key.startswith(_SET_ORDER):
            continue
        delete_list = False
        if key.startswith("$deleteFromPrimitiveList"):
            if not key.startswith(_DELETE_PRIMITIVE) or len(key) == len(_DELETE_PRIMITIVE):
                raise _bad("invalid patch: $deleteFromPrimitiveList requires a field name")
            delete_list = True
            key = key[len(_DELETE_PRIMITIVE) :]
        elif key.startswith("$"):
            raise _bad(f"unknown strategic merge patch directive {key!r}")
        info = field_info(type_name, key)
        if value is None:
            original.pop(key, None)
            continue
        if key not in original:
            if not delete_list:
                original[key] = _new_value(value, info)
            continue
        current = original[key]
        if isinstance(current, dict) and isinstance(value, dict):
            if info.strategy == "replace":
                original[key] = _discard_nulls(value)
            else:
                original[key] = _merge_map(current, value, info.type)
        elif isinstance(current, list) and isinstance(value, list):
            if info.merges or delete_list:
                original[key] = _merge_list(current, value, info, delete_list=delete_list)
            else:
                original[key] = _discard_nulls(value)
        else:
            original[key] = _new_value(value, info)
    return original


def _identity(item: Any, merge_key: str) -> Any:
    if merge_key and isinstance(item, dict):
        return ("k", _hashable(item.get(merge_key)))
    return ("v", _hashable(item))


def _hashable(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, bool):
        return ("bool", value)
    return value


def _uniqify_scalars(items: list[Any]) -> list[Any]:
    # strategicpatch.uniqifyScalars, including its swap-with-last order.
    s = list(items)
    length = len(s) - 1
    i = 0
    while i < length:
        j = i + 1
        while j <= length:
            if _hashable(s[i]) == _hashable(s[j]):
                s[j] = s[length]
                s = s[:length]
                length -= 1
                j -= 1
            j += 1
        i += 1
    return s


def _merge_list(
    original: list[Any], patch: list[Any], info: FieldInfo, *, delete_list: bool
) -> list[Any]:
    """``mergeSlice``: merge a patch list into a merging list and order the result."""
    if not original and not patch:
        return original
    sample = patch[0] if patch else original[0]
    if not isinstance(sample, dict):
        if delete_list:
            drop = {_hashable(v) for v in patch}
            return [v for v in original if _hashable(v) not in drop]
        merged_scalars = _uniqify_scalars([*original, *patch])
        return _normalize(merged_scalars, patch, original, "")
    key = info.merge_key
    if not key:
        raise PatchError(f"cannot merge lists without merge key for {info.type or 'list'}")
    # mergeSliceWithSpecialElements
    plain: list[Any] = []
    replace = False
    for item in patch:
        if not isinstance(item, dict):
            raise _bad(f"invalid patch: list item {item!r} is not an object")
        directive = item.get(_DIRECTIVE)
        if directive is None:
            plain.append(item)
        elif directive == "delete":
            if key not in item:
                raise PatchError(f"map: {_go(item)} does not contain declared merge key: {key}")
            value = _hashable(item[key])
            original = [
                o for o in original if not (isinstance(o, dict) and _hashable(o.get(key)) == value)
            ]
        elif directive == "replace":
            replace = True
        elif directive == "merge":
            raise PatchError("merging lists cannot yet be specified in the patch")
        else:
            raise _bad(f"unknown patch type: {directive} in map: {_go(item)}")
    if replace:
        return [_merge_map({}, p, info.type) for p in plain]
    # mergeSliceWithoutSpecialElements
    merged = list(original)
    for item in plain:
        if key not in item:
            raise PatchError(f"map: {_go(item)} does not contain declared merge key: {key}")
        value = _hashable(item[key])
        for i, o in enumerate(merged):
            if isinstance(o, dict) and _hashable(o.get(key)) == value:
                merged[i] = _merge_map(o, item, info.type)
                break
        else:
            merged.append(_merge_map({}, item, info.type))
    return _normalize(merged, plain, original, key)


def _normalize(merged: list[Any], order: list[Any], server_order: list[Any], key: str) -> list[Any]:
    """Partition by presence in ``order`` and interleave as ``normalizeElementOrder``."""
    order_index: dict[Any, int] = {}
    for i, item in enumerate(order):
        order_index.setdefault(_identity(item, key), i)
    server_index: dict[Any, int] = {}
    for i, item in enumerate(server_order):
        server_index.setdefault(_identity(item, key), i)
    patch_items = [m for m in merged if _identity(m, key) in order_index]
    server_only = [m for m in merged if _identity(m, key) not in order_index]
    patch_items.sort(key=lambda m: order_index[_identity(m, key)])
    server_only.sort(key=lambda m: server_index.get(_identity(m, key), len(server_index)))
    # mergeSortedSlice(serverOnly, patch, serverOrder)
    out: list[Any] = []
    i = j = 0
    while i < len(server_only) or j < len(patch_items):
        if i >= len(server_only):
            out.append(patch_items[j])
            j += 1
        elif j >= len(patch_items):
            out.append(server_only[i])
            i += 1
        else:
            li = server_index.get(_identity(server_only[i], key), -1)
            ri = server_index.get(_identity(patch_items[j], key), -1)
            if li >= 0 and ri >= 0 and li < ri:
                out.append(server_only[i])
                i += 1
            else:
                out.append(patch_items[j])
                j += 1
    return out


def _apply_set_order(
    original: dict[str, Any], patch: Mapping[str, Any], field: str, order: Any, info: FieldInfo
) -> None:
    """``mergePatchIntoOriginal`` for one ``$setElementOrder/<field>`` directive."""
    if not isinstance(order, list):
        raise _bad(f"invalid patch: $setElementOrder/{field} should be a list")
    key = info.merge_key
    in_original = isinstance(original.get(field), list)
    patch_list: Any = patch.get(field)
    in_patch = isinstance(patch_list, list)
    if in_patch:
        _validate_order(patch_list, order, key)
    if in_original and not in_patch:
        merged = original[field]
    elif in_patch and not in_original:
        merged = _new_value(patch_list, info)
    elif in_original and in_patch:
        if info.merges:
            merged = _merge_list(original[field], patch_list, info, delete_list=False)
        else:
            merged = _discard_nulls(patch_list)
    else:
        return
    server = original[field] if in_original else []
    if not server and not (patch_list if in_patch else None):
        raise PatchError("no elements in any of the given slices")  # sliceElementType
    if in_original and in_patch and info.merges and key:
        server = _aliased_server_order(server, patch_list, key)
    original[field] = _normalize(merged, order, server, key)


def _validate_order(patch_list: list[Any], order: list[Any], key: str) -> None:
    """``validatePatchWithSetOrderList``: patch items must follow the order list's order."""
    if not order or not patch_list:
        return
    items = [p for p in patch_list if not (isinstance(p, dict) and p.get(_DIRECTIVE) == "delete")]
    pi = oi = 0
    while pi < len(items) and oi < len(order):
        item = items[pi]
        if isinstance(item, dict) and _DIRECTIVE in item:
            pi += 1
            continue
        if key and isinstance(item, dict):
            if key not in item:
                raise PatchError(f"map: {_go(item)} does not contain declared merge key: {key}")
            equal = isinstance(order[oi], dict) and _hashable(order[oi].get(key)) == _hashable(
                item[key]
            )
        else:
            equal = _hashable(order[oi]) == _hashable(item)
        if equal:
            pi += 1
        oi += 1
    if pi < len(items):
        raise PatchError(
            f"The order in patch list:\n{_go(patch_list)}\n doesn't match $setElementOrder "
            f"list:\n{_go(order)}\n"
        )


def _aliased_server_order(original: list[Any], patch: list[Any], key: str) -> list[Any]:
    """What Go's ``originalFieldValue`` holds after ``mergeSlice`` ran on the same array.

    ``deleteMatchingEntries`` deletes with ``append(s[:i], s[i+1:]...)`` and new items are
    appended into the freed capacity, all inside the backing array the caller's slice header
    still spans; the later ``$setElementOrder`` normalisation orders by that stale view. The
    array kube-apiserver builds (``ToUnstructured``) has ``cap == len``, which is modelled here.
    """
    if any(isinstance(p, dict) and p.get(_DIRECTIVE) == "replace" for p in patch):
        return original
    backing = list(original)
    length = capacity = len(backing)
    for item in patch:
        if isinstance(item, dict) and item.get(_DIRECTIVE) == "delete" and key in item:
            value = _hashable(item[key])
            while True:
                i = next(
                    (
                        n
                        for n in range(length)
                        if isinstance(backing[n], dict) and _hashable(backing[n].get(key)) == value
                    ),
                    None,
                )
                if i is None:
                    break
                backing[i : length - 1] = backing[i + 1 : length]
                length -= 1
    current = {_identity(backing[n], key) for n in range(length)}
    aliased = True
    for item in patch:
        if not isinstance(item, dict) or _DIRECTIVE in item:
            continue
        ident = _identity(item, key)
        if ident in current:
            continue
        current.add(ident)
        if aliased and length < capacity:
            backing[length] = item
            length += 1
        else:
            aliased = False  # append reallocated: later items land in a new array
    return backing


def apply_strategic_merge_patch(doc: Any, patch: Any, *, group: str, kind: str) -> Any:
    """Apply a strategic merge patch to a built-in object the way kube-apiserver does.

    Args:
        doc: the current object (a dict); not mutated.
        patch: the decoded patch body (a dict); not mutated.
        group: the object's API group (``""`` for core).
        kind: the object's kind.

    Returns:
        A new object sharing no structure with the inputs.

    Raises:
        PatchError: code 415 for a kind that does not support strategic merge (custom
            resources; message :data:`UNSUPPORTED_MEDIA_TYPE_MESSAGE`); 400 for a malformed
            patch or directive; 422 for a list item missing its merge key.
    """
    top = root_type(group, kind)
    if top is None:
        raise PatchError(UNSUPPORTED_MEDIA_TYPE_MESSAGE, code=415)
    if not isinstance(patch, dict):
        raise _bad(
            "json: cannot unmarshal "
            f"{'array' if isinstance(patch, list) else type(patch).__name__} "
            "into Go value of type map[string]interface {}"
        )
    base = json_copy(doc) if isinstance(doc, dict) else {}
    result = _merge_map(base, json_copy(dict(patch)), top)
    return result
