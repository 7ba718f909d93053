"""What the Go types of the built-in kinds say that ``kcm.models`` does not.

The models give every field's JSON name and its kind (string, integer, map, list, struct,
time, bytes). Go's types say more, and kube-apiserver's decoder acts on it: which integers are
``int64`` (the rest are ``int32``, and 2^31 does not fit), which string maps are
``ResourceList``\\ s and which strings are ``resource.Quantity`` (parsed and written back in
canonical form), and the Go names its error messages use (``v1.ObjectMeta``,
``map[string]string``).
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any, Final

import msgspec

from kcm.models import FrozenMap, MicroTime

from ._protobuf_messages import INLINE, MAP, MESSAGES, OMITEMPTY, POINTER, REPEATED

__all__ = ["GoField", "GoType", "go_fields", "go_type"]

_INT64_FIELDS: Final = frozenset(
    {
        "activeDeadlineSeconds",
        "deletionGracePeriodSeconds",
        "expirationSeconds",
        "fsGroup",
        "generation",
        "gid",
        "gracePeriodSeconds",
        "int",
        "maxItems",
        "maxLength",
        "maxProperties",
        "minItems",
        "minLength",
        "minProperties",
        "observedGeneration",
        "revision",
        "runAsGroup",
        "runAsUser",
        "seconds",
        "sizeBytes",
        "startingDeadlineSeconds",
        "supplementalGroups",
        "terminationGracePeriodSeconds",
        "tolerationSeconds",
        "uid",
    }
)
"""JSON names of the ``int64`` fields (every other integer is an ``int32``)."""

_INT32_EXCEPTIONS: Final = frozenset({("CertificateSigningRequestSpec", "expirationSeconds")})

_QUANTITY_MAPS: Final = frozenset(
    {
        ("ContainerStatus", "allocatedResources"),
        ("LimitRangeItem", "default"),
        ("LimitRangeItem", "defaultRequest"),
        ("LimitRangeItem", "max"),
        ("LimitRangeItem", "maxLimitRequestRatio"),
        ("LimitRangeItem", "min"),
        ("NodeStatus", "allocatable"),
        ("NodeStatus", "capacity"),
        ("Overhead", "podFixed"),
        ("PersistentVolumeClaimStatus", "allocatedResources"),
        ("PersistentVolumeClaimStatus", "capacity"),
        ("PersistentVolumeSpec", "capacity"),
        ("PodSpec", "overhead"),
        ("PodStatus", "allocatedResources"),
        ("ResourceQuotaSpec", "hard"),
        ("ResourceQuotaStatus", "hard"),
        ("ResourceQuotaStatus", "used"),
        ("ResourceRequirements", "limits"),
        ("ResourceRequirements", "requests"),
        ("VolumeResourceRequirements", "limits"),
        ("VolumeResourceRequirements", "requests"),
    }
)
"""``ResourceList`` fields: maps of resource names to quantities."""

_QUANTITIES: Final = frozenset(
    {
        ("CSIStorageCapacity", "capacity"),
        ("CSIStorageCapacity", "maximumVolumeSize"),
        ("EmptyDirVolumeSource", "sizeLimit"),
        ("MetricTarget", "averageValue"),
        ("MetricTarget", "value"),
        ("MetricValueStatus", "averageValue"),
        ("MetricValueStatus", "value"),
        ("ResourceFieldSelector", "divisor"),
    }
)
"""``resource.Quantity`` fields."""


def _omitempty_bools() -> frozenset[tuple[str, str]]:
    """``bool`` fields (not ``*bool``) tagged ``omitempty``, by struct name, from the struct
    tags the protobuf layout was generated from (a field inlined into a struct counts as the
    struct's; a name whose versions disagree is left out). Go decodes ``false`` into them and
    writes nothing back, so kube-apiserver never stores a ``false`` there: a merge patch of
    ``{"spec": {"paused": false}}`` leaves no ``paused`` key."""

    def plain(message: str) -> dict[str, bool]:
        out: dict[str, bool] = {}
        for _number, name, typ, flags in MESSAGES[message]:
            if flags & INLINE and typ in MESSAGES:
                out |= plain(typ)
            elif typ == "bool":
                out[name] = bool(flags & OMITEMPTY) and not flags & (POINTER | REPEATED | MAP)
        return out

    verdicts: dict[tuple[str, str], set[bool]] = {}
    for message in MESSAGES:
        struct = message.split(".", 1)[1]
        for name, omitted in plain(message).items():
            verdicts.setdefault((struct, name), set()).add(omitted)
    return frozenset(key for key, seen in verdicts.items() if seen == {True})


_OMITEMPTY_BOOLS: Final = _omitempty_bools()


@dataclass(frozen=True)
class GoType:
    """A field's type as the decoder needs it.

    ``kind`` is one of ``string``, ``bool``, ``int32``, ``int64``, ``float64``, ``bytes``,
    ``time``, ``microtime``, ``quantity``, ``intorstring``, ``any`` (free-form JSON),
    ``struct`` (``model`` is its class), ``map`` and ``list`` (``item`` is the value type).
    ``name`` is the Go name error messages print.
    """

    kind: str
    name: str
    model: Any = None
    item: GoType | None = None


@dataclass(frozen=True)
class GoField:
    """One field of a struct: its JSON name and type."""

    json_name: str
    type: GoType
    omit_false: bool = False
    """A ``bool`` tagged ``omitempty``: ``false`` is not written back."""


_SCALARS: Final = {
    str: GoType("string", "string"),
    bool: GoType("bool", "bool"),
    float: GoType("float64", "float64"),
    bytes: GoType("bytes", "[]uint8"),
    datetime: GoType("time", "v1.Time"),
    MicroTime: GoType("microtime", "v1.MicroTime"),
}
_ANY: Final = GoType("any", "interface {}")
_QUANTITY: Final = GoType("quantity", "resource.Quantity")
_RESOURCE_LIST_ITEM: Final = GoType("quantity", "resource-list-item")
"""A quantity in a ``ResourceList`` (rounded up to thousandths by the defaults)."""


def _package(model: type[Any]) -> str:
    """The Go package a model's type lives in: ``kcm.models.apps_v1`` -> ``v1``."""
    module = model.__module__.rsplit(".", 1)[-1]
    return module.rsplit("_", 1)[-1] if "_" in module else "v1"


def _non_none(tp: Any) -> list[Any]:
    if isinstance(tp, types.UnionType) or typing.get_origin(tp) is typing.Union:
        return [a for a in typing.get_args(tp) if a is not type(None)]
    return [tp]


def go_type(tp: Any, *, owner: str = "", field: str = "") -> GoType:
    """The :class:`GoType` of a model annotation (``field`` of struct ``owner``)."""
    args = _non_none(tp)
    if set(args) == {int, str}:
        return GoType("intorstring", "int32")
    if len(args) != 1:
        return _ANY
    tp = args[0]
    if tp is int:
        int64 = field in _INT64_FIELDS and (owner, field) not in _INT32_EXCEPTIONS
        return GoType("int64", "int64") if int64 else GoType("int32", "int32")
    if tp is str and (owner, field) in _QUANTITIES:
        return _QUANTITY
    if tp in _SCALARS:
        return _SCALARS[tp]
    origin = typing.get_origin(tp)
    if origin is tuple:
        item = go_type(typing.get_args(tp)[0], owner=owner, field=field)
        return GoType("list", f"[]{item.name}", item=item)
    if origin is FrozenMap:
        if (owner, field) in _QUANTITY_MAPS:
            return GoType("map", "v1.ResourceList", item=_RESOURCE_LIST_ITEM)
        value = go_type(typing.get_args(tp)[1], owner=owner, field=field)
        return GoType("map", f"map[string]{value.name}", item=value)
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        return GoType("struct", f"{_package(tp)}.{tp.__name__}", model=tp)
    return _ANY


@cache
def go_fields(model: type[Any]) -> dict[str, GoField]:
    """The fields of a model by JSON name (a kind's ``kind`` included: the models keep it as
    their tag)."""
    out: dict[str, GoField] = {}
    if model.__struct_config__.tag_field == "kind":
        out["kind"] = GoField("kind", _SCALARS[str])
    for f in msgspec.structs.fields(model):
        out[f.encode_name] = GoField(
            f.encode_name,
            go_type(f.type, owner=model.__name__, field=f.encode_name),
            omit_false=(model.__name__, f.encode_name) in _OMITEMPTY_BOOLS,
        )
    return out
