"""Server-side apply and ``metadata.managedFields`` bookkeeping.

A faithful subset of ``sigs.k8s.io/structured-merge-diff`` as kube-apiserver uses it:

* Field sets are stored in the real ``FieldsV1`` format: ``f:<field>`` for struct/map
  fields, ``k:{"name":"c1"}`` for items of associative lists, ``v:"x"`` for items of set
  lists (``finalizers``), and ``.`` for a node that is itself owned as well as its children.
* What is a list of which kind, and what is atomic, comes from the object's type
  (:mod:`._field_types`): built-in kinds' Go types (merge keys, ``+structType=atomic`` such
  as a label selector), a custom resource's CRD schema (``x-kubernetes-list-type``,
  ``x-kubernetes-list-map-keys``, ``x-kubernetes-map-type``; lists are atomic otherwise).
* Merged associative and set lists are ordered as structured-merge-diff orders them: items
  only in the live list keep their places, applied items follow the applied order.
* :func:`apply_ssa`: the applied fields become the manager's ``Apply`` set (map entries that
  are not declared fields own themselves, ``.``); a field the manager applied before but omits
  now is removed unless some manager owns it; changing a field another manager owns raises
  :class:`ApplyConflict` (kube-apiserver's 409 text) unless ``force``, which moves ownership;
  ``kubectl`` takes over, without a conflict, what it last applied client-side (and keeps that
  annotation current). Values equal to the live ones are shared, not conflicts. Built-in
  kinds lose the empty maps and lists their Go types would not keep.
* :func:`track_update`: a create/update/patch gives the manager's ``Update`` entry every field
  it added or changed, and every map, list and item it added (``.``; not what the kind's Go
  zero value already has), taking them from other managers (updates never conflict); removed
  fields leave every set. Sending ``managedFields: [{}]`` clears the history, as in k8s.
* Both leave out the fields the write's strategy resets (``status`` on a main resource,
  ``spec`` on ``/status``), and keep entries in kube-apiserver's order (Apply first, then by
  time, manager, apiVersion, subresource).

Not modelled: per-version field set conversion, the ``before-first-apply`` manager for
objects that predate managedFields, nulls inside applied configurations (ignored), and
unions.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, NamedTuple

from kcm.errors import KcmError

from ._field_types import ATOMIC, MAP, SET, UNTYPED, FieldType, builtin_type
from ._patch import json_copy, json_equal
from ._strategic import root_type

__all__ = [
    "ApplyConflict",
    "Conflict",
    "apply_ssa",
    "field_set",
    "fields_to_paths",
    "path_string",
    "paths_to_fields",
    "track_update",
]

Path = tuple[str, ...]
"""A field path as FieldsV1 element strings: ``("f:spec", 'k:{"name":"c"}', "f:image")``."""

_IGNORED_TOP: Final = frozenset({"apiVersion", "kind"})
_IGNORED_META: Final = frozenset(
    {
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "selfLink",
        "managedFields",
    }
)
_DEFAULTS: Final = {"protocol": "TCP"}


class Conflict:
    """One conflicting field: who owns it and where it is."""

    __slots__ = ("api_version", "manager", "operation", "path", "subresource")

    def __init__(
        self, manager: str, operation: str, api_version: str, path: Path, subresource: str = ""
    ) -> None:
        self.manager = manager
        self.operation = operation
        self.api_version = api_version
        self.path = path
        self.subresource = subresource

    @property
    def who(self) -> str:
        """The manager as kube-apiserver prints it (``"m" using apps/v1`` for Update owners)."""
        if self.operation == "Apply":
            return json.dumps(self.manager)
        if self.subresource:
            return (
                f"{json.dumps(self.manager)} using {self.api_version} "
                f"with subresource {json.dumps(self.subresource)}"
            )
        return f"{json.dumps(self.manager)} using {self.api_version}"

    @property
    def field(self) -> str:
        """The path as kube-apiserver prints it, e.g. ``.spec.replicas``."""
        return path_string(self.path)

    def __repr__(self) -> str:
        return f"Conflict({self.who}, {self.field})"


class ApplyConflict(KcmError):
    """A server-side apply would change fields other managers own (kube-apiserver: 409).

    Attributes:
        conflicts: each (manager, path) in conflict.
        causes: the Status causes (``FieldManagerConflict``) kube-apiserver sends.
    """

    def __init__(self, conflicts: list[Conflict]) -> None:
        self.conflicts = conflicts
        self.causes = [
            {
                "reason": "FieldManagerConflict",
                "message": f"conflict with {c.who}",
                "field": c.field,
            }
            for c in conflicts
        ]
        super().__init__(_conflict_message(conflicts))

    def to_status(self, *, name: str = "", group: str = "", kind: str = "") -> dict[str, Any]:
        """The 409 Conflict Status dict (``errors.NewApplyConflict``)."""
        details: dict[str, Any] = {}
        if name:
            details["name"] = name
        if group:
            details["group"] = group
        if kind:
            details["kind"] = kind
        details["causes"] = self.causes
        return {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": str(self),
            "reason": "Conflict",
            "details": details,
            "code": 409,
        }


def _conflict_message(conflicts: list[Conflict]) -> str:
    if len(conflicts) == 1:
        c = conflicts[0]
        return f"Apply failed with 1 conflict: conflict with {c.who}: {c.field}"
    by_manager: dict[str, list[str]] = {}
    for c in conflicts:
        by_manager.setdefault(c.who, []).append(c.field)
    lines: list[str] = []
    for who in sorted(by_manager):
        lines.append(f"conflicts with {who}:")
        lines.extend(f"- {p}" for p in by_manager[who])
    return f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Paths and FieldsV1
# --------------------------------------------------------------------------------------------


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _element_string(element: str) -> str:
    kind, _, rest = element.partition(":")
    if kind == "f":
        return "." + rest
    if kind == "k":
        keys = json.loads(rest)
        return "[" + ",".join(f"{k}={_canonical(v)}" for k, v in sorted(keys.items())) + "]"
    if kind == "v":
        return "[=" + rest + "]"
    return "[" + rest + "]"


def path_string(path: Path) -> str:
    """A path as kube-apiserver prints it: ``.spec.containers[name="c"].image``."""
    return "".join(_element_string(e) for e in path)


def paths_to_fields(paths: Iterable[Path]) -> dict[str, Any]:
    """Encode a set of member paths as a FieldsV1 object (keys sorted, ``.`` first)."""
    root: dict[str, Any] = {}
    members: set[int] = set()  # ids of nodes that are members themselves
    # Sorted paths visit every parent before its children and siblings in key order, so the
    # dicts come out sorted; "." sorts before "f:", "k:" and "v:" anyway.
    for path in sorted(set(paths)):
        node = root
        for element in path:
            child = node.get(element)
            if child is None:
                if not node and id(node) in members:
                    node["."] = {}
                child = node[element] = {}
            node = child
        members.add(id(node))
    return root


def fields_to_paths(fields: Mapping[str, Any] | None) -> set[Path]:
    """Decode a FieldsV1 object into its set of member paths."""
    out: set[Path] = set()

    def walk(node: Mapping[str, Any], prefix: Path) -> None:
        for key, child in node.items():
            if key == ".":
                if prefix:
                    out.add(prefix)
                continue
            path = (*prefix, key)
            if not child:
                out.add(path)
            elif isinstance(child, dict):
                walk(child, path)

    if fields:
        walk(fields, ())
    return out


# --------------------------------------------------------------------------------------------
# Walking objects with their type
# --------------------------------------------------------------------------------------------

_NODE: Final = object()
"""The value of a path that is itself a member and has members below it (a list item, a map
entry that is not a declared field, a map or list an update added): FieldsV1's ``.``."""

_MISSING: Final = object()
"""No value at all (not even null): what an update that adds a field compares it with."""


def _item_element(item: Mapping[str, Any], keys: tuple[str, ...]) -> str:
    pairs: list[tuple[str, Any, bool]] = []
    for k in keys:
        v = item.get(k, _DEFAULTS.get(k))
        if v is None:
            continue
        scalar = isinstance(v, str | int | float) and not isinstance(v, bool)
        pairs.append((k, v if scalar else _canonical(v), not scalar))
    return _key_element(tuple(pairs))


@functools.lru_cache(maxsize=4096)
def _key_element(pairs: tuple[tuple[str, Any, bool], ...]) -> str:
    return "k:" + _canonical({k: json.loads(v) if encoded else v for k, v, encoded in pairs})


def _list_elements(items: list[Any], shape: int, keys: tuple[str, ...]) -> list[str]:
    if shape == MAP:
        return [_item_element(i, keys) for i in items]
    return ["v:" + _canonical(i) for i in items]


def _ignored(prefix: Path, key: str) -> bool:
    if not prefix:
        return key in _IGNORED_TOP
    return prefix == ("f:metadata",) and key in _IGNORED_META


def _owned(obj: Mapping[str, Any], ftype: FieldType) -> dict[Path, Any]:
    """The paths applying ``obj`` owns, with their values (structured-merge-diff's
    ``ToFieldSet``): leaves, list items, empty maps, and map entries that are not fields."""
    out: dict[Path, Any] = {}
    _owned_map(obj, ftype, (), out)
    return out


def _owned_map(
    value: Mapping[str, Any], ftype: FieldType, prefix: Path, out: dict[Path, Any]
) -> None:
    for key, child in value.items():
        if child is None or _ignored(prefix, key):
            continue
        path = (*prefix, "f:" + key)
        _owned_value(child, ftype.member(key), path, out)
        if path not in out and not ftype.is_field(key):
            out[path] = _NODE


def _owned_value(value: Any, ftype: FieldType, path: Path, out: dict[Path, Any]) -> None:
    if isinstance(value, dict):
        if not value or ftype.atomic:
            out[path] = value
        else:
            _owned_map(value, ftype, path, out)
    elif isinstance(value, list):
        shape, keys = ftype.list_shape(value)
        if shape == ATOMIC:
            out[path] = value
            return
        item_type = ftype.items()
        for item, element in zip(value, _list_elements(value, shape, keys), strict=True):
            item_path = (*path, element)
            out[item_path] = _NODE
            if shape == MAP and not item_type.atomic:
                _owned_map(item, item_type, item_path, out)
    else:
        out[path] = value


def _compare(old: Any, new: Any, ftype: FieldType) -> tuple[set[Path], set[Path]]:
    """(added or modified paths, removed paths) from ``old`` to ``new``: structured-merge-diff's
    ``Compare``, where a map or list an update adds is itself added (FieldsV1's ``.``) unless
    the kind's Go zero value already has it. Equal subtrees are skipped with one ``==``."""
    changed: set[Path] = set()
    removed: set[Path] = set()
    _compare_map(old, new, ftype, (), changed, removed)
    return changed, removed


def _compare_value(
    old: Any, new: Any, ftype: FieldType, path: Path, changed: set[Path], removed: set[Path]
) -> None:
    if old is not _MISSING and new is not _MISSING and type(old) is type(new) and old == new:
        return
    container = dict if isinstance(old, dict) or isinstance(new, dict) else list
    if container is list and not (isinstance(old, list) or isinstance(new, list)):
        container = None  # type: ignore[assignment]
    if container is dict and not ftype.atomic and _fits(old, dict) and _fits(new, dict):
        if _empty(old) and _empty(new):
            _leaf(old, new, path, changed, removed)
            return
        _compare_map(old, new, ftype, path, changed, removed)
        _added_or_removed(old, new, path, changed, removed)
        return
    if container is list and _fits(old, list) and _fits(new, list):
        items = [*_items(old), *_items(new)]
        shape, keys = ftype.list_shape(items)
        if shape != ATOMIC and not (_empty(old) and _empty(new)):
            _compare_list(
                _items(old), _items(new), ftype.items(), shape, keys, path, changed, removed
            )
            _added_or_removed(old, new, path, changed, removed)
            return
    _leaf(old, new, path, changed, removed)


def _fits(value: Any, container: type) -> bool:
    return value is _MISSING or value is None or isinstance(value, container)


def _empty(value: Any) -> bool:
    return value is _MISSING or not value


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _leaf(old: Any, new: Any, path: Path, changed: set[Path], removed: set[Path]) -> None:
    if old is _MISSING:
        if new is not _MISSING:
            changed.add(path)
    elif new is _MISSING:
        removed.add(path)
    elif not (type(old) is type(new) and old == new) and not json_equal(old, new):
        changed.add(path)


def _added_or_removed(
    old: Any, new: Any, path: Path, changed: set[Path], removed: set[Path]
) -> None:
    if old is _MISSING:
        changed.add(path)
    elif new is _MISSING:
        removed.add(path)


def _compare_map(
    old: Any, new: Any, ftype: FieldType, prefix: Path, changed: set[Path], removed: set[Path]
) -> None:
    o: Mapping[str, Any] = old if isinstance(old, dict) else {}
    n: Mapping[str, Any] = new if isinstance(new, dict) else {}
    keys = o.keys() | n.keys()
    if old is _MISSING or new is _MISSING:  # an added or removed struct has its zero members
        keys |= ftype.zero_members()
    for key in keys:
        if _ignored(prefix, key):
            continue
        ov, nv = o.get(key, _MISSING), n.get(key, _MISSING)
        if ov is not _MISSING and type(ov) is type(nv) and ov == nv:
            continue
        if ftype.in_zero_value(key):  # the typed object has it even where the JSON does not
            if ov is _MISSING and old is not _MISSING:
                ov = {} if isinstance(nv, dict) and not nv else None  # a zero struct is {}
            if nv is _MISSING and new is not _MISSING:
                nv = {} if isinstance(ov, dict) and not ov else None
        _compare_value(ov, nv, ftype.member(key), (*prefix, "f:" + key), changed, removed)


def _compare_list(
    old: list[Any],
    new: list[Any],
    item_type: FieldType,
    shape: int,
    keys: tuple[str, ...],
    path: Path,
    changed: set[Path],
    removed: set[Path],
) -> None:
    olds = dict(zip(_list_elements(old, shape, keys), old, strict=True))
    news = dict(zip(_list_elements(new, shape, keys), new, strict=True))
    for element in olds.keys() | news.keys():
        ov, nv = olds.get(element, _MISSING), news.get(element, _MISSING)
        item_path = (*path, element)
        if shape == SET or item_type.atomic:
            _leaf(ov, nv, item_path, changed, removed)
        else:
            _compare_value(ov, nv, item_type, item_path, changed, removed)


def _without(paths: set[Path], ignored: tuple[Path, ...]) -> set[Path]:
    """``paths`` without those at or below an ``ignored`` path (``RecursiveDifference``)."""
    if not ignored:
        return paths
    return {p for p in paths if not any(p[: len(i)] == i for i in ignored)}


def field_set(obj: Mapping[str, Any], *, group: str, kind: str) -> set[Path]:
    """The member paths an object sets (what a manager owns after applying it)."""
    api_version = str(obj.get("apiVersion") or "")
    return set(_owned(obj, _default_type(group, api_version, kind)))


def _default_type(group: str, api_version: str, kind: str) -> FieldType:
    if root_type(group, kind) is None:
        return UNTYPED
    return builtin_type(group, api_version, kind)


# --------------------------------------------------------------------------------------------
# Merging an applied configuration into the live object
# --------------------------------------------------------------------------------------------


def _merge_map(
    live: Mapping[str, Any], applied: Mapping[str, Any], ftype: FieldType
) -> dict[str, Any]:
    result: dict[str, Any] = dict(live)
    for key, value in applied.items():
        if value is None:
            continue
        result[key] = _merge_value(result.get(key), value, ftype.member(key))
    return result


def _merge_value(live: Any, applied: Any, ftype: FieldType) -> Any:
    if isinstance(applied, dict) and not ftype.atomic:
        return _merge_map(live if isinstance(live, dict) else {}, applied, ftype)
    if isinstance(applied, list) and isinstance(live, list):
        shape, keys = ftype.list_shape([*live, *applied])
        if shape == MAP:
            item_type = ftype.items()

            def assoc(item: Any) -> str:
                return _item_element(item, keys)

            def merge_item(lhs: Any, rhs: Any) -> Any:
                if item_type.atomic:
                    return json_copy(rhs)
                return _merge_map(lhs or {}, rhs, item_type)

            return _merge_ordered(live, applied, assoc, merge_item)
        if shape == SET:
            return _merge_ordered(live, applied, _canonical, lambda lhs, rhs: json_copy(rhs))
    return json_copy(applied)


def _merge_ordered(
    lhs: list[Any],
    rhs: list[Any],
    element: Callable[[Any], str],
    merge: Callable[[Any, Any], Any],
) -> list[Any]:
    """structured-merge-diff's ``visitListItems`` order for associative and set lists.

    Items only in the live list keep their places; applied items come in applied order, and a
    live item that the applied list also names is emitted where the applied list puts it.
    """
    lhs_pe = [element(i) for i in lhs]
    rhs_pe = [element(i) for i in rhs]
    observed_lhs: dict[str, Any] = {}
    for pe, item in zip(lhs_pe, lhs, strict=True):
        observed_lhs.setdefault(pe, item)
    observed_rhs: dict[str, Any] = {}
    for pe, item in zip(rhs_pe, rhs, strict=True):
        observed_rhs.setdefault(pe, item)
    shared = [pe for pe in rhs_pe if pe in observed_lhs]
    shared_at = 0
    next_shared = shared[0] if shared else None
    merged_rhs: set[str] = set()
    out: list[Any] = []
    li = ri = 0
    while li < len(lhs_pe) or ri < len(rhs_pe):
        if li < len(lhs_pe) and ri < len(rhs_pe):
            pe = lhs_pe[li]
            if pe == rhs_pe[ri]:
                merged_rhs.add(pe)
                out.append(merge(observed_lhs.get(pe), observed_rhs[pe]))
                li += 1
                ri += 1
                shared_at += 1
                next_shared = shared[shared_at] if shared_at < len(shared) else None
                continue
            if pe in observed_rhs and next_shared is not None and next_shared != pe:
                li += 1  # a shared item, but not the one due in this round
                continue
        if li < len(lhs_pe):
            pe = lhs_pe[li]
            if pe not in observed_rhs:
                out.append(lhs[li])
                li += 1
                continue
            if pe in merged_rhs:
                li += 1
                continue
        if ri < len(rhs_pe):
            pe = rhs_pe[ri]
            if pe not in merged_rhs:
                merged_rhs.add(pe)
                out.append(merge(observed_lhs.get(pe), observed_rhs[pe]))
            ri += 1
            if next_shared is not None and next_shared == pe:
                shared_at += 1
                next_shared = shared[shared_at] if shared_at < len(shared) else None
    return out


def _remove_path(obj: dict[str, Any], path: Path) -> None:
    """Delete the node at ``path`` and prune maps the deletion leaves empty."""
    trail: list[tuple[Any, Any]] = []
    node: Any = obj
    for element in path:
        kind, _, rest = element.partition(":")
        if kind == "f" and isinstance(node, dict) and rest in node:
            trail.append((node, rest))
            node = node[rest]
        elif kind == "k" and isinstance(node, list):
            want = json.loads(rest)
            idx = next(
                (
                    i
                    for i, item in enumerate(node)
                    if isinstance(item, dict)
                    and all(item.get(k, _DEFAULTS.get(k)) == v for k, v in want.items())
                ),
                None,
            )
            if idx is None:
                return
            trail.append((node, idx))
            node = node[idx]
        elif kind == "v" and isinstance(node, list):
            want = json.loads(rest)
            idx = next((i for i, item in enumerate(node) if item == want), None)
            if idx is None:
                return
            trail.append((node, idx))
            node = node[idx]
        else:
            return
    if not trail:
        return
    container, key = trail.pop()
    del container[key]
    while trail and not container and isinstance(container, dict) and len(trail) > 1:
        container, key = trail.pop()
        del container[key]


# --------------------------------------------------------------------------------------------
# managedFields entries
# --------------------------------------------------------------------------------------------


def _entries(obj: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    meta = (obj or {}).get("metadata") or {}
    return [dict(e) for e in (meta.get("managedFields") or []) if isinstance(e, dict)]


def _entry_key(entry: Mapping[str, Any]) -> tuple[str, str, str]:
    return (
        str(entry.get("manager", "")),
        str(entry.get("operation", "")),
        str(entry.get("subresource", "")),
    )


def _build_entry(
    manager: str,
    operation: str,
    api_version: str,
    now: str,
    paths: set[Path],
    subresource: str = "",
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "manager": manager,
        "operation": operation,
        "apiVersion": api_version,
        "time": now,
        "fieldsType": "FieldsV1",
        "fieldsV1": paths_to_fields(paths),
    }
    if subresource:
        entry["subresource"] = subresource
    return entry


def _finish(entries: list[tuple[dict[str, Any], set[Path], bool]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for entry, paths, changed in entries:
        if not paths:
            continue
        if changed:
            entry = {**entry, "fieldsType": "FieldsV1", "fieldsV1": paths_to_fields(paths)}
        out.append(entry)
    return out


def _api_version(obj: Mapping[str, Any], fallback: Mapping[str, Any] | None = None) -> str:
    return str(obj.get("apiVersion") or (fallback or {}).get("apiVersion") or "v1")


def _group_of(api_version: str) -> str:
    return api_version.rpartition("/")[0]


def _stripped(paths: set[Path], ignored: tuple[Path, ...]) -> set[Path]:
    """``paths`` without the reset fields and without ``metadata`` itself (kube-apiserver's
    stripMeta: apiVersion, kind and metadata's server-set fields are never owned)."""
    out = _without(paths, ignored)
    out.discard(("f:metadata",))
    return out


def track_update(
    old: dict[str, Any] | None,
    new: dict[str, Any],
    *,
    manager: str,
    operation: str = "Update",
    now: str,
    kind: str | None = None,
    subresource: str = "",
    field_type: FieldType | None = None,
    ignored: tuple[Path, ...] = (),
) -> dict[str, Any]:
    """Record a create/update/patch in ``metadata.managedFields``.

    Args:
        old: the stored object before the write (None on create).
        new: the object about to be stored; not mutated.
        manager: the field manager (``?fieldManager=`` or derived from the user agent).
        operation: ``Update`` (every non-apply write).
        now: the RFC 3339 timestamp to record.
        kind: the object's kind when ``new`` lacks ``kind``.
        subresource: ``status`` (or ``scale``) for writes through a subresource; recorded in
            the entry as kube-apiserver does.
        field_type: the object's type (default: the built-in kind's, else untyped).
        ignored: paths the write's strategy resets (``status`` on the main resource of a kind
            with a status subresource, ``spec`` on ``/status``): nobody gains or loses them.

    Returns:
        A copy of ``new`` whose managedFields give ``manager`` every field it set or changed.
        Only ``metadata`` is copied; every other subtree is shared with ``new``.
    """
    # only metadata changes: share every other subtree with ``new`` (which is not mutated)
    result: dict[str, Any] = dict(new)
    result["metadata"] = dict(new.get("metadata") or {})
    api_version = _api_version(new, old)
    obj_kind = str(new.get("kind") or (old or {}).get("kind") or kind or "")
    ftype = field_type or _default_type(_group_of(api_version), api_version, obj_kind)
    meta = result.setdefault("metadata", {})
    previous = _entries(old)
    sent = new.get("metadata", {}).get("managedFields")
    if (
        sent is not None
        and sent != []
        and sent != (old or {}).get("metadata", {}).get("managedFields")
    ):
        # the client rewrote managedFields itself: [{}] clears it, anything else is taken as is
        previous = [dict(e) for e in sent if isinstance(e, dict) and e]
        if not previous:
            meta.pop("managedFields", None)
            return result
    changed, removed = _compare(old if old is not None else {}, new, ftype)
    changed, removed = _stripped(changed, ignored), _stripped(removed, ignored)
    if not changed and not removed:
        if previous:
            meta["managedFields"] = _sorted(previous)
        else:
            meta.pop("managedFields", None)
        return result
    owner = _Writer(manager, operation, subresource, api_version, now)
    _set_managed_fields(meta, _updated_entries(previous, owner, changed, removed))
    return result


class _Writer(NamedTuple):
    """Who writes, how and when: the key and contents of their managedFields entry."""

    manager: str
    operation: str
    subresource: str
    api_version: str
    now: str

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.manager, self.operation, self.subresource)

    def entry(self, paths: set[Path]) -> dict[str, Any]:
        return _build_entry(
            self.manager, self.operation, self.api_version, self.now, paths, self.subresource
        )


_Entry = tuple[dict[str, Any], set[Path], bool]
"""An entry, the paths it will own, and whether its fieldsV1 must be re-encoded."""


def _updated_entries(
    previous: list[dict[str, Any]], writer: _Writer, changed: set[Path], removed: set[Path]
) -> list[_Entry]:
    """An update's entries: the writer owns what it changed, which no one else owns now; its
    entry's time moves only when what it owns changes (managedFieldsUpdater)."""
    entries: list[_Entry] = []
    mine: _Entry | None = None
    for entry in previous:
        paths = fields_to_paths(entry.get("fieldsV1"))
        is_mine = _entry_key(entry) == writer.key and entry.get("apiVersion") in (
            None,
            writer.api_version,
        )
        kept = paths - removed - (set() if is_mine else changed)
        if is_mine:
            kept |= changed
            stamped = {**entry, "apiVersion": writer.api_version}
            if kept != paths:
                stamped["time"] = writer.now
            mine = (stamped, kept, True)
            entries.append(mine)
        else:
            entries.append((entry, kept, kept != paths))
    if mine is None and changed:
        entries.append((writer.entry(changed), changed, False))  # already encoded
    return entries


def _sort_key(entry: Mapping[str, Any]) -> tuple[str, str, str, str, str]:
    return (
        str(entry.get("operation", "")),
        str(entry.get("time", ""))[:19],  # whole seconds, as Go compares Time.Unix()
        str(entry.get("manager", "")),
        str(entry.get("apiVersion", "")),
        str(entry.get("subresource", "")),
    )


def _sorted(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """managedFields in kube-apiserver's order: Apply before Update, then by time, manager,
    apiVersion and subresource."""
    return sorted(entries, key=_sort_key)


def _set_managed_fields(meta: dict[str, Any], entries: list[_Entry]) -> None:
    final = _sorted(_finish(entries))
    if final:
        meta["managedFields"] = final
    else:
        meta.pop("managedFields", None)


def apply_ssa(
    live: dict[str, Any] | None,
    applied: dict[str, Any],
    *,
    manager: str,
    force: bool,
    group: str,
    kind: str,
    now: str,
    subresource: str = "",
    field_type: FieldType | None = None,
    ignored: tuple[Path, ...] = (),
) -> dict[str, Any]:
    """Server-side apply ``applied`` (the request body) onto ``live`` for ``manager``.

    Args:
        live: the stored object, or None when the apply creates it.
        applied: the applied configuration (decoded YAML/JSON); not mutated.
        manager: ``?fieldManager=`` (required by kube-apiserver for apply).
        force: ``?force=true``: take ownership of conflicting fields instead of failing.
        group: the object's API group.
        kind: the object's kind.
        now: the RFC 3339 timestamp to record in the manager's entry.
        subresource: ``status`` for an apply to the status subresource.
        field_type: the object's type (default: the built-in kind's, else untyped).
        ignored: paths the write's strategy resets (see :func:`track_update`).

    Returns:
        The new object with ``metadata.managedFields`` updated.

    Raises:
        ApplyConflict: the apply changes fields other managers own and ``force`` is false.
    """
    api_version = _api_version(applied, live)
    ftype = field_type or _default_type(group, api_version, kind)
    writer = _Writer(manager, "Apply", subresource, api_version, now)
    applied_set = _stripped(set(_owned(applied, ftype)), ignored)
    base = json_copy(live) if live is not None else {}
    merged: dict[str, Any] = _merge_map(base, applied, ftype)

    previous = _entries(live)
    mine_prev: set[Path] = set()
    mine_entry: dict[str, Any] | None = None
    others: list[tuple[dict[str, Any], set[Path]]] = []
    for entry in previous:
        paths = fields_to_paths(entry.get("fieldsV1"))
        if _entry_key(entry) == writer.key:
            mine_prev |= paths
            mine_entry = mine_entry or entry
        else:
            others.append((entry, paths))

    owned_by_others: set[Path] = set().union(*(paths for _, paths in others))
    _drop_omitted(merged, mine_prev - applied_set, owned_by_others | applied_set)
    _drop_empty(merged, ftype)
    changed, removed = _compare(live if live is not None else {}, merged, ftype)
    changed, removed = _stripped(changed, ignored), _stripped(removed, ignored)
    # conflicts: fields the apply changes that another manager owns
    conflicts = _conflicts(others, manager, changed)
    if conflicts and not force:
        # kubectl's upgrade from client-side apply takes what it last applied client-side
        allowed = _last_applied_fields(live, ftype, api_version) if manager == _KUBECTL else set()
        remaining = [c for c in conflicts if c.path not in allowed]
        if remaining:
            raise ApplyConflict(remaining)
    taken = {c.path for c in conflicts}
    unchanged = not changed and not removed and applied_set == mine_prev
    entries = _applied_entries(
        previous, writer, applied_set, taken | removed, keep=mine_entry if unchanged else None
    )
    _set_managed_fields(merged.setdefault("metadata", {}), entries)
    if manager == _KUBECTL:
        _update_last_applied(merged, applied)
    return merged


# -- kubectl's upgrade from client-side apply (lastAppliedManager, lastAppliedUpdater) ----------

_KUBECTL: Final = "kubectl"
_LAST_APPLIED: Final = "kubectl.kubernetes.io/last-applied-configuration"


def _last_applied(obj: Mapping[str, Any] | None) -> str:
    annotations = ((obj or {}).get("metadata") or {}).get("annotations") or {}
    value = annotations.get(_LAST_APPLIED) if isinstance(annotations, Mapping) else None
    return value if isinstance(value, str) else ""


def _last_applied_fields(live: Any, ftype: FieldType, api_version: str) -> set[Path]:
    """The fields ``kubectl apply`` (client-side) last applied with the values they still have:
    the ones ``kubectl apply --server-side`` may take without a conflict."""
    raw = _last_applied(live)
    if not raw:
        return set()
    try:
        last = json.loads(raw)
    except ValueError:
        return set()
    if not isinstance(last, dict) or last.get("apiVersion") != api_version:
        return set()
    changed, removed = _compare(last, live, ftype)
    return set(_owned(last, ftype)) - changed - removed


def _update_last_applied(merged: dict[str, Any], applied: Mapping[str, Any]) -> None:
    """``kubectl apply --server-side`` keeps an existing last-applied annotation current: the
    applied configuration without that annotation, as Go encodes it."""
    if not _last_applied(merged):
        return
    config = json_copy(dict(applied))
    meta = config.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("annotations"), dict):
        meta["annotations"].pop(_LAST_APPLIED, None)
        if not meta["annotations"]:
            del meta["annotations"]
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"
    merged["metadata"]["annotations"][_LAST_APPLIED] = text


def _conflicts(
    others: list[tuple[dict[str, Any], set[Path]]], manager: str, changing: set[Path]
) -> list[Conflict]:
    """Fields the apply changes that another manager owns, per owner, in path order."""
    conflicts: list[Conflict] = []
    for entry, paths in others:
        if entry.get("manager") == manager:
            continue
        for p in sorted(paths & changing):
            conflicts.append(
                Conflict(
                    str(entry.get("manager", "")),
                    str(entry.get("operation", "")),
                    str(entry.get("apiVersion", "")),
                    p,
                    str(entry.get("subresource", "")),
                )
            )
    return conflicts


def _drop_empty(value: Any, ftype: FieldType) -> None:
    """Remove the empty maps and lists a built-in kind's Go types would not keep
    (``omitempty``): the object goes through the typed object before it is stored."""
    if isinstance(value, dict):
        for key in list(value):
            child = value[key]
            if child in ({}, []) and ftype.drops_empty(key):
                del value[key]
            elif isinstance(child, dict | list):
                _drop_empty(child, ftype.member(key))
    elif isinstance(value, list):
        item_type = ftype.items()
        for item in value:
            _drop_empty(item, item_type)


def _drop_omitted(merged: dict[str, Any], dropped: set[Path], owned_by_others: set[Path]) -> None:
    """Remove the fields this manager applied before and omits now, unless another owns them
    (or something inside them)."""
    removed: list[Path] = []
    for path in sorted(dropped, key=lambda p: (len(p), p)):  # parents before their children
        if path in owned_by_others or any(path[: len(r)] == r for r in removed):
            continue
        if any(o[: len(path)] == path for o in owned_by_others):
            continue  # someone owns something inside it: keep the node
        _remove_path(merged, path)
        removed.append(path)


def _applied_entries(
    previous: list[dict[str, Any]],
    writer: _Writer,
    applied: set[Path],
    taken: set[Path],
    *,
    keep: dict[str, Any] | None = None,
) -> list[_Entry]:
    """An apply's entries: the writer's owns exactly what it applied (its old entry, time
    included, when nothing changed: ``keep``); the others lose what a forced apply took from
    them and what the apply removed."""
    entries: list[_Entry] = []
    mine_written = False
    for entry in previous:
        if _entry_key(entry) == writer.key:
            if not mine_written:
                if keep is not None:
                    entries.append((keep, applied, False))
                else:
                    entries.append((writer.entry(applied), applied, False))
                mine_written = True
            continue
        paths = fields_to_paths(entry.get("fieldsV1"))
        kept = paths - taken
        entries.append((entry, kept, kept != paths))
    if not mine_written:
        entries.append((writer.entry(applied), applied, False))
    return entries
