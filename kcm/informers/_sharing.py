"""Share equal parts between cached objects (a transform that cuts memory per object).

Pods of one ReplicaSet carry the same containers, volumes, tolerations and security context;
every pod repeats the same condition types, phases, image names, node names and label
values. Decoded separately, each copy costs its own strings, lists and structs. Models are
frozen, so equal parts can be one object: :class:`PartSharer` keeps a bounded table of parts
it has seen and swaps each part of a new object for an equal one already cached.
"""

from __future__ import annotations

import threading
from typing import Any, Final, TypeVar, final

import msgspec
import msgspec.inspect as mi

from kcm.models import FrozenMap

from ._transforms import strip_managed_fields

__all__ = ["PartSharer", "compact"]

T = TypeVar("T")

_encode = msgspec.msgpack.Encoder().encode


@final
class PartSharer:
    """A transform that replaces parts of an object by equal parts of earlier objects.

    Below the object's top-level structs (``metadata``, ``spec``, ``status``): strings are
    interned (except fields unique per object: name, uid, resourceVersion...); nested frozen
    structs (a container, a volume, a toleration...), arrays of structs and string maps
    (labels, resource quantities) equal to one seen before become that very instance; parts seen for
    the first time are remembered, with their own strings interned (``descend``). The result
    is equal (``==``) to the input; the input is never changed. Per-type plans (which fields
    to look at) are computed once from the model with :func:`msgspec.inspect.type_info`.

    Args:
        max_entries: size of the table; when full it is emptied and starts over (sharing
            then restarts too; nothing already cached changes). Bounds the table's memory.
        descend: also intern the strings inside parts seen for the first time (conditions
            and container statuses differ by timestamps but repeat their strings).

    Guarantees:
        * ``sharer(obj) == obj``, always; objects that are not structs are returned as is.
        * Only frozen msgspec structs, tuples of them, ``str`` and string-to-string
          :class:`~kcm.models.FrozenMap` values are shared: all read-only, so sharing is
          invisible (a map given as a plain ``dict`` is shared as a ``FrozenMap``).
        * Thread-safe (the table is only added to; emptying it swaps in a new dict).

    Caveats:
        * Costs Python time per object (40-70 µs for the benchmark's 5 KB pod, on top of
          ~25 µs of decoding); worth it for large caches of similar objects. Measured in
          docs/benchmarks.md#informer_throughput.
        * Equality is by encoded bytes: two equal maps in a different key order are not
          shared (harmless).
    """

    def __init__(self, *, max_entries: int = 65536, descend: bool = True) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be >= 1, got {max_entries}")
        self._max = max_entries
        self._descend = descend
        self._table: dict[Any, Any] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._table)

    def clear(self) -> None:
        """Forget every remembered part (cached objects are unaffected)."""
        self._table = {}

    def __call__(self, obj: T) -> T:
        if not isinstance(obj, msgspec.Struct):
            return obj
        changes: dict[str, Any] = {}
        for name, kind in _plan(type(obj)):
            value = getattr(obj, name)
            if value is None:
                continue
            if kind is _STRUCT:
                new = self._fields(value, self._descend, _UNIQUE)  # metadata, spec, status
            else:
                new = self._share(value, kind, False)
            if new is not value:
                changes[name] = new
        if not changes:
            return obj
        return msgspec.structs.replace(obj, **changes)

    # -- internals -----------------------------------------------------------------------

    def _remember(self, key: Any, value: Any) -> Any:
        table = self._table
        if len(table) >= self._max:
            with self._lock:
                if len(self._table) >= self._max:
                    self._table = table = {}
        return table.setdefault(key, value)

    def _fields(self, struct: Any, descend: bool, skip: frozenset[str] = frozenset()) -> Any:
        """``struct`` with its fields shared (a new struct only if something changed)."""
        changes: dict[str, Any] | None = None
        table = self._table
        cls = type(struct)
        plan = _plans.get(cls) or _plan(cls)
        for name, kind in plan:
            value = getattr(struct, name)
            if value is None or name in skip:
                continue
            if kind is _ATOM:  # inlined: most fields are strings
                if type(value) is not str:
                    continue  # timestamps are left alone (rarely equal, cheap)
                new = table.get(value)
                if new is None:
                    new = self._remember(value, value)
            else:
                new = self._share(value, kind, descend)
            if new is not value:
                if changes is None:
                    changes = {}
                changes[name] = new
        if changes is None:
            return struct
        return msgspec.structs.replace(struct, **changes)

    def _share(self, value: Any, kind: int, descend: bool) -> Any:
        table = self._table
        if kind is _ATOM:
            if type(value) is not str:
                return value
            found = table.get(value)
            return found if found is not None else self._remember(value, value)
        key: Any
        if kind is _STRUCT:
            key = (type(value), _encode(value))
            found = table.get(key)
            if found is not None:
                return found
            if descend:
                value = self._fields(value, False)
            return self._remember(key, value)
        if kind is _LIST:
            if not value:
                return value
            share = self._share
            items = tuple([share(item, _STRUCT, descend) for item in value])
            for a, b in zip(items, value, strict=True):
                if a is not b:
                    return items
            return value
        # _MAP: a string map (labels, annotations, resource quantities)
        if not value:
            return value
        pairs = tuple(value.items())
        key = (dict, pairs)
        found = table.get(key)
        if found is not None:
            return found
        for k, v in pairs:
            if type(v) is not str or type(k) is not str:
                return value  # bytes (Secret.data) or nested values: not worth it
        atom = self._share
        shared = FrozenMap({atom(k, _ATOM, False): atom(v, _ATOM, False) for k, v in pairs})
        return self._remember(key, shared)


_UNIQUE: Final = frozenset(
    {"name", "uid", "resource_version", "generate_name", "self_link", "pod_ip", "pod_ips"}
)
"""Fields of an object's top-level structs that are unique per object: not worth a lookup."""

_ATOM: Final = 0
_STRUCT: Final = 1
_LIST: Final = 2
_MAP: Final = 3
_plans: dict[type, tuple[tuple[str, int], ...]] = {}


def _kind(t: mi.Type) -> int | None:
    if isinstance(t, mi.UnionType):
        types = [x for x in t.types if not isinstance(x, mi.NoneType)]
        if len(types) != 1:
            return None
        t = types[0]
    if isinstance(t, mi.StrType | mi.DateTimeType):
        return _ATOM
    if isinstance(t, mi.StructType) and t.cls.__struct_config__.frozen:
        return _STRUCT
    if (
        isinstance(t, mi.VarTupleType | mi.ListType)
        and isinstance(t.item_type, mi.StructType)
        and t.item_type.cls.__struct_config__.frozen
    ):
        return _LIST
    if isinstance(t, mi.CustomType) and t.cls is FrozenMap:
        return _MAP  # whether the values are strings is checked per map
    if (
        isinstance(t, mi.DictType)
        and isinstance(t.key_type, mi.StrType)
        and isinstance(t.value_type, mi.StrType)
    ):
        return _MAP
    return None


def _plan(cls: type) -> tuple[tuple[str, int], ...]:
    """The fields of ``cls`` worth sharing, with how (computed once per type)."""
    plan = _plans.get(cls)
    if plan is None:
        info = mi.type_info(cls)
        fields = info.fields if isinstance(info, mi.StructType) else ()
        plan = tuple((f.name, kind) for f in fields if (kind := _kind(f.type)) is not None)
        _plans[cls] = plan
    return plan


_default_sharer = PartSharer()


def compact(obj: T) -> T:
    """Strip ``metadata.managedFields`` and share equal parts with other cached objects.

    :func:`strip_managed_fields` followed by a process-wide :class:`PartSharer`: the
    ready-made transform for large caches (``SharedIndexInformer(api, transform=compact)``).
    The cached object equals the stripped object.
    """
    return _default_sharer(strip_managed_fields(obj))
