"""Which field selectors each kind supports, and the field values they read.

Mirrors kube-apiserver: the field label conversion functions (``AddFieldLabelConversionFunc``
in ``pkg/apis/core/v1/conversion.go``, ``apps/v1``, ``batch/v1``, ``events/v1``,
``certificates/v1``) decide which labels a kind accepts; the registry's
``ToSelectableFields`` functions decide their values. Kinds without their own function accept
``metadata.name`` and ``metadata.namespace`` (``DefaultMetaV1FieldSelectorConversion``), and so
do custom resources (plus a CRD's ``selectableFields`` when the caller passes them).

Values are the strings Go computes: booleans ``"true"``/``"false"``, counts in decimal with
``"0"`` when unset, and ``""`` for an unset string. A field the kind accepts but never sets
(``status.successful`` on StatefulSets) reads as ``None``, which a selector reads as ``""``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from kcm.selectors import FieldSelector

__all__ = [
    "FieldSelectorNotSupported",
    "default_unsupported_field_message",
    "field_getter",
    "field_matcher",
    "field_value",
    "supported_fields",
    "unsupported_field_message",
    "validate_field_selector",
]

_Getter = Callable[[Mapping[str, Any]], "str | None"]


class FieldSelectorNotSupported(ValueError):
    """A field selector names a field the kind does not support (kube-apiserver: 400)."""

    code: Final = 400

    def __init__(self, field: str, message: str | None = None) -> None:
        super().__init__(message or unsupported_field_message(field))
        self.field = field

    def to_status(self) -> dict[str, Any]:
        """The 400 BadRequest Status dict kube-apiserver sends."""
        return {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": str(self),
            "reason": "BadRequest",
            "code": 400,
        }


def unsupported_field_message(field: str) -> str:
    """kube-apiserver's message for an unsupported field label of a kind with its own field
    label conversion (and of custom resources)."""
    return f"field label not supported: {field}"


def default_unsupported_field_message(field: str) -> str:
    """kube-apiserver's message for an unsupported field label of a kind without its own
    conversion (``DefaultMetaV1FieldSelectorConversion``: ConfigMaps, Deployments, ...)."""
    return f'"{field}" is not a known field selector: only "metadata.name", "metadata.namespace"'


def _path(*keys: str) -> _Getter:
    def get(obj: Mapping[str, Any]) -> str | None:
        node: Any = obj
        for key in keys:
            if not isinstance(node, dict):
                return ""
            node = node.get(key)
        if node is None:
            return ""
        if isinstance(node, bool):
            return "true" if node else "false"
        return str(node)

    return get


def _bool(*keys: str) -> _Getter:
    inner = _path(*keys)

    def get(obj: Mapping[str, Any]) -> str | None:
        value = inner(obj)
        return "true" if value == "true" else "false"

    return get


def _count(*keys: str) -> _Getter:
    inner = _path(*keys)

    def get(obj: Mapping[str, Any]) -> str | None:
        return inner(obj) or "0"

    return get


def _unset(obj: Mapping[str, Any]) -> str | None:
    return None


def _pod_ip(obj: Mapping[str, Any]) -> str | None:
    status = obj.get("status") or {}
    ips = status.get("podIPs") or []
    if ips and isinstance(ips[0], Mapping):
        return str(ips[0].get("ip") or "")
    return str(status.get("podIP") or "")


_META: Final[dict[str, _Getter]] = {
    "metadata.name": _path("metadata", "name"),
    "metadata.namespace": _path("metadata", "namespace"),
}
_NAME_ONLY: Final[dict[str, _Getter]] = {"metadata.name": _META["metadata.name"]}

_REF_FIELDS: Final = (
    "kind",
    "namespace",
    "name",
    "uid",
    "apiVersion",
    "resourceVersion",
    "fieldPath",
)
_EVENT_CORE: Final[dict[str, _Getter]] = {
    **_META,
    **{f"involvedObject.{f}": _path("involvedObject", f) for f in _REF_FIELDS},
    "reason": _path("reason"),
    "reportingComponent": _path("reportingComponent"),
    "source": _path("source", "component"),
    "type": _path("type"),
}
_EVENT_EVENTS_V1: Final[dict[str, _Getter]] = {
    **_META,
    **{f"regarding.{f}": _path("regarding", f) for f in _REF_FIELDS},
    "reason": _path("reason"),
    "reportingController": _path("reportingController"),
    "type": _path("type"),
}

# (group, kind) -> field -> getter. Sources: the field label conversion funcs and the
# registry ToSelectableFields funcs of kube-apiserver v1.32.
_TABLE: Final[dict[tuple[str, str], dict[str, _Getter]]] = {
    ("", "Pod"): {
        **_META,
        "spec.nodeName": _path("spec", "nodeName"),
        "spec.restartPolicy": _path("spec", "restartPolicy"),
        "spec.schedulerName": _path("spec", "schedulerName"),
        "spec.serviceAccountName": _path("spec", "serviceAccountName"),
        "spec.hostNetwork": _bool("spec", "hostNetwork"),
        "status.phase": _path("status", "phase"),
        "status.podIP": _pod_ip,
        "status.nominatedNodeName": _path("status", "nominatedNodeName"),
    },
    ("", "Node"): {**_NAME_ONLY, "spec.unschedulable": _bool("spec", "unschedulable")},
    ("", "Namespace"): {**_NAME_ONLY, "status.phase": _path("status", "phase")},
    ("", "Secret"): {**_META, "type": _path("type")},
    ("", "Service"): {
        **_META,
        "spec.clusterIP": _path("spec", "clusterIP"),
        "spec.type": _path("spec", "type"),
    },
    ("", "ReplicationController"): {**_META, "status.replicas": _count("status", "replicas")},
    ("", "Event"): _EVENT_CORE,
    ("events.k8s.io", "Event"): _EVENT_EVENTS_V1,
    ("apps", "ReplicaSet"): {**_META, "status.replicas": _count("status", "replicas")},
    ("apps", "StatefulSet"): {**_META, "status.successful": _unset},
    ("batch", "Job"): {**_META, "status.successful": _count("status", "succeeded")},
    ("certificates.k8s.io", "CertificateSigningRequest"): {
        **_NAME_ONLY,
        "spec.signerName": _path("spec", "signerName"),
    },
}


# Kinds with a field label conversion function of their own in kube-apiserver 1.24
# (``AddFieldLabelConversionFunc``); the others answer with the default conversion's message.
_OWN_CONVERSION: Final = frozenset(
    {
        ("", "Pod"),
        ("", "Node"),
        ("", "ReplicationController"),
        ("", "Event"),
        ("", "Namespace"),
        ("", "Secret"),
        ("events.k8s.io", "Event"),
        ("batch", "Job"),
        ("certificates.k8s.io", "CertificateSigningRequest"),
    }
)


def _selectable_field_getter(json_path: str) -> _Getter:
    keys = tuple(k for k in json_path.lstrip(".").split(".") if k)
    return _path(*keys)


@functools.lru_cache(maxsize=256)
def _getters(group: str, kind: str, extra: tuple[str, ...]) -> dict[str, _Getter]:
    table = dict(_TABLE.get((group, kind), _META))
    for json_path in extra:
        table[json_path.lstrip(".")] = _selectable_field_getter(json_path)
    return table


def _group_for(kind: str) -> str:
    """The group of a built-in kind named without one (the core group wins, as for Event)."""
    for group, table_kind in _TABLE:
        if table_kind == kind and group == "":
            return ""
    for group, table_kind in _TABLE:
        if table_kind == kind:
            return group
    return ""


def supported_fields(
    group: str, kind: str | None = None, *, extra: Iterable[str] = ()
) -> frozenset[str]:
    """The field selector labels kube-apiserver accepts for a kind.

    Args:
        group: API group (``""`` for the core group).
        kind: the kind, e.g. ``Pod``. (``supported_fields("Pod")`` is accepted too: the
            group is then inferred from the kind, core first.)
        extra: a CRD's ``spec.versions[].selectableFields[].jsonPath`` values (``.spec.color``).
    """
    if kind is None:
        group, kind = _group_for(group), group
    return frozenset(_getters(group, kind, tuple(extra)))


def field_value(
    obj: Mapping[str, Any],
    group: str,
    kind: str,
    field: str | None = None,
    *,
    extra: Iterable[str] = (),
) -> str | None:
    """The value a field selector compares for ``field`` of ``obj`` (None: unsupported/unset).

    ``field_value(obj, kind, field)`` (no group) is accepted too; see :func:`supported_fields`.
    """
    if field is None:
        group, kind, field = _group_for(group), group, kind
    getter = _getters(group, kind, tuple(extra)).get(field)
    return getter(obj) if getter is not None else None


def field_getter(
    obj: Mapping[str, Any], group: str, kind: str, *, extra: Iterable[str] = ()
) -> Callable[[str], str | None]:
    """A getter for ``FieldSelector.matches`` reading ``obj``'s selectable fields."""
    getters = _getters(group, kind, tuple(extra))

    def get(field: str) -> str | None:
        getter = getters.get(field)
        return getter(obj) if getter is not None else None

    return get


def validate_field_selector(
    selector: FieldSelector,
    group: str,
    kind: str,
    *,
    extra: Iterable[str] = (),
    custom: bool = False,
) -> None:
    """Check every field of ``selector`` is supported for the kind (``custom``: a custom
    resource's).

    Raises:
        FieldSelectorNotSupported: the first unsupported field (in selector order), carrying
            kube-apiserver's message: ``field label not supported: <field>`` for kinds with a
            conversion of their own and custom resources, the default conversion's
            ``"<field>" is not a known field selector: ...`` for the rest.
    """
    getters = _getters(group, kind, tuple(extra))
    for requirement in selector.requirements:
        if requirement.field not in getters:
            own = (group, kind) in _OWN_CONVERSION or custom
            message = None if own else default_unsupported_field_message(requirement.field)
            raise FieldSelectorNotSupported(requirement.field, message)


def field_matcher(
    selector: FieldSelector, group: str, kind: str, *, extra: Iterable[str] = ()
) -> Callable[[Mapping[str, Any]], bool]:
    """A fast predicate over whole objects for ``selector`` (build once per list/watch).

    Raises:
        FieldSelectorNotSupported: the selector names a field the kind does not support.
    """
    validate_field_selector(selector, group, kind, extra=extra)
    getters = _getters(group, kind, tuple(extra))
    terms = [(getters[r.field], r.value, r.operator == "=") for r in selector.requirements]

    def match(obj: Mapping[str, Any]) -> bool:
        return all(((get(obj) or "") == value) is equal for get, value, equal in terms)

    return match
