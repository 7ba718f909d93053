"""Server-side apply and ``metadata.managedFields`` bookkeeping.

A faithful subset of ``sigs.k8s.io/structured-merge-diff`` as kube-apiserver uses it:

* Field sets are stored in the real ``FieldsV1`` format: ``f:<field>`` for struct/map
  fields, ``k:{"name":"c1"}`` for items of associative lists, ``v:"x"`` for items of set
  lists (``finalizers``), and ``.`` for a node that is itself owned as well as its children.
* Which lists are associative (and by which keys), sets, or atomic comes from the strategic
  merge table in ``_strategic`` (lists with a merge key are associative, merging scalar lists
  are sets, the rest atomic); ``Container.ports`` and ``ServiceSpec.ports`` are keyed by
  ``(containerPort|port, protocol)`` with protocol defaulting to ``TCP``, as their OpenAPI
  ``x-kubernetes-list-map-keys`` (likewise ``topologySpreadConstraints`` by ``topologyKey``
  and ``whenUnsatisfiable``). Custom resources have no table: maps are granular and every
  list is atomic (the OpenAPI default).
* Merged associative and set lists are ordered as structured-merge-diff orders them: items
  only in the live list keep their places, applied items follow the applied order.
* :func:`apply_ssa`: the applied fields become the manager's ``Apply`` set; a field the
  manager applied before but omits now is removed unless another manager owns it; changing a
  field another manager owns raises :class:`ApplyConflict` (kube-apiserver's 409 text) unless
  ``force``, which moves ownership. Values equal to the live ones are shared, not conflicts.
* :func:`track_update`: a create/update/patch gives the manager's ``Update`` entry every field
  it set or changed, taking those fields from other managers (updates never conflict); removed
  fields leave every set. Sending ``managedFields: [{}]`` clears the history, as in k8s.

Not modelled: per-version field set conversion, the ``before-first-apply`` manager for
objects that predate managedFields, status/spec reset by subresource (the server does that),
and nulls inside applied configurations (ignored).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, NamedTuple

from kcm.errors import KcmError

from ._patch import json_copy, json_equal
from ._strategic import FieldInfo, field_info, root_type

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
# OpenAPI list-map-keys that differ from the strategic merge key (protocol defaults to TCP).
_MULTI_KEYS: Final[dict[tuple[str, str], tuple[str, ...]]] = {
    ("Container", "ports"): ("containerPort", "protocol"),
    ("ServiceSpec", "ports"): ("port", "protocol"),
    ("PodSpec", "topologySpreadConstraints"): ("topologyKey", "whenUnsatisfiable"),
}
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
# Walking objects with the schema
# --------------------------------------------------------------------------------------------

_ITEM: Final = object()


class _ListKind:
    ATOMIC, ASSOCIATIVE, SET = range(3)


def _list_kind(
    parent: str, field: str, info: FieldInfo, items: list[Any]
) -> tuple[int, tuple[str, ...]]:
    if not info.merges:
        return _ListKind.ATOMIC, ()
    if info.merge_key:
        keys = _MULTI_KEYS.get((parent, field), (info.merge_key,))
        if all(isinstance(i, dict) and info.merge_key in i for i in items):
            return _ListKind.ASSOCIATIVE, keys
        return _ListKind.ATOMIC, ()
    if all(not isinstance(i, dict | list) for i in items):
        return _ListKind.SET, ()
    return _ListKind.ATOMIC, ()


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


def _walk_map(
    value: Mapping[str, Any], type_name: str, prefix: Path, out: dict[Path, Any], schema: bool
) -> None:
    for key, child in value.items():
        if child is None or _ignored(prefix, key):
            continue
        _walk_value(child, type_name, key, (*prefix, "f:" + key), out, schema)


def _ignored(prefix: Path, key: str) -> bool:
    if not prefix:
        return key in _IGNORED_TOP
    return prefix == ("f:metadata",) and key in _IGNORED_META


def _walk_value(
    value: Any, parent: str, field: str, path: Path, out: dict[Path, Any], schema: bool
) -> None:
    info = field_info(parent, field) if schema else _NO_INFO
    if isinstance(value, dict):
        if not value:
            out[path] = {}
        else:
            _walk_map(value, info.type, path, out, schema)
    elif isinstance(value, list):
        kind, keys = _list_kind(parent, field, info, value)
        if kind == _ListKind.ASSOCIATIVE:
            for item in value:
                item_path = (*path, _item_element(item, keys))
                out[item_path] = _ITEM
                _walk_map(item, info.type, item_path, out, schema)
        elif kind == _ListKind.SET:
            for item in value:
                out[(*path, "v:" + _canonical(item))] = _ITEM
        else:
            out[path] = value
    else:
        out[path] = value


_NO_INFO: Final = FieldInfo()


def _leaves(obj: Mapping[str, Any], top: str | None) -> dict[Path, Any]:
    """Every owned path of ``obj`` with its value (``_ITEM`` for list item nodes)."""
    out: dict[Path, Any] = {}
    _walk_map(obj, top or "Object", (), out, top is not None)
    return out


def _diff(
    old: Mapping[str, Any], new: Mapping[str, Any], top: str | None
) -> tuple[set[Path], set[Path]]:
    """(changed or added paths, removed paths) between two objects.

    Equal subtrees are skipped with one ``==`` (C speed), so an update that touches one field
    costs little more than that field.
    """
    changed: set[Path] = set()
    removed: set[Path] = set()
    schema = top is not None

    def diff_map(o: Mapping[str, Any], n: Mapping[str, Any], type_name: str, prefix: Path) -> None:
        for key in o.keys() | n.keys():
            ov, nv = o.get(key), n.get(key)
            if (ov is None and nv is None) or _ignored(prefix, key):
                continue
            if type(ov) is type(nv) and ov == nv:
                continue
            path = (*prefix, "f:" + key)
            if isinstance(ov, dict) and isinstance(nv, dict) and ov and nv:
                info = field_info(type_name, key) if schema else _NO_INFO
                diff_map(ov, nv, info.type, path)
                continue
            old_leaves: dict[Path, Any] = {}
            new_leaves: dict[Path, Any] = {}
            if ov is not None:
                _walk_value(ov, type_name, key, path, old_leaves, schema)
            if nv is not None:
                _walk_value(nv, type_name, key, path, new_leaves, schema)
            changed.update(
                p
                for p, v in new_leaves.items()
                if p not in old_leaves or not _same(old_leaves[p], v)
            )
            removed.update(old_leaves.keys() - new_leaves.keys())

    diff_map(old, new, top or "Object", ())
    return changed, removed


def field_set(obj: Mapping[str, Any], *, group: str, kind: str) -> set[Path]:
    """The member paths an object sets (what a manager owns after applying it)."""
    return set(_leaves(obj, root_type(group, kind)))


# --------------------------------------------------------------------------------------------
# Merging an applied configuration into the live object
# --------------------------------------------------------------------------------------------


def _merge_object(live: Mapping[str, Any], applied: Mapping[str, Any], top: str | None) -> Any:
    schema = top is not None
    result: dict[str, Any] = dict(live)
    for key, value in applied.items():
        if value is None:
            continue
        result[key] = _merge_field(result.get(key), value, top or "Object", key, schema)
    return result


def _merge_field(live: Any, applied: Any, parent: str, field: str, schema: bool) -> Any:
    info = field_info(parent, field) if schema else FieldInfo()
    if isinstance(applied, dict):
        result: dict[str, Any] = dict(live) if isinstance(live, dict) else {}
        for key, value in applied.items():
            if value is None:
                continue
            result[key] = _merge_field(result.get(key), value, info.type, key, schema)
        return result
    if isinstance(applied, list) and isinstance(live, list):
        kind, keys = _list_kind(parent, field, info, [*live, *applied])
        if kind == _ListKind.ASSOCIATIVE:

            def assoc(item: Any) -> str:
                return _item_element(item, keys)

            def merge_item(lhs: Any, rhs: Any) -> Any:
                return _merge_item(lhs or {}, rhs, info.type, schema)

            return _merge_ordered(live, applied, assoc, merge_item)
        if kind == _ListKind.SET:
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


def _merge_item(
    live: Mapping[str, Any], applied: Mapping[str, Any], type_name: str, schema: bool
) -> dict[str, Any]:
    result: dict[str, Any] = dict(live)
    for key, value in applied.items():
        if value is None:
            continue
        result[key] = _merge_field(result.get(key), value, type_name, key, schema)
    return result


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


def _finish(
    entries: list[tuple[dict[str, Any], set[Path], bool]], now: str
) -> list[dict[str, Any]]:
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


def track_update(
    old: dict[str, Any] | None,
    new: dict[str, Any],
    *,
    manager: str,
    operation: str = "Update",
    now: str,
    kind: str | None = None,
    subresource: str = "",
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

    Returns:
        A copy of ``new`` whose managedFields give ``manager`` every field it set or changed.
        Only ``metadata`` is copied; every other subtree is shared with ``new``.
    """
    # only metadata changes: share every other subtree with ``new`` (which is not mutated)
    result: dict[str, Any] = dict(new)
    result["metadata"] = dict(new.get("metadata") or {})
    api_version = _api_version(new, old)
    obj_kind = str(new.get("kind") or (old or {}).get("kind") or kind or "")
    top = root_type(_group_of(api_version), obj_kind)
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
    if old is None:
        changed: set[Path] = set(_leaves(new, top))
        removed: set[Path] = set()
    else:
        changed, removed = _diff(old, new, top)
    if not changed and not removed:
        if previous:
            meta["managedFields"] = previous
        else:
            meta.pop("managedFields", None)
        return result
    owner = _Writer(manager, operation, subresource, api_version, now)
    _set_managed_fields(meta, _updated_entries(previous, owner, changed, removed), now)
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
    """An update's entries: the writer owns what it changed, which no one else owns now."""
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
            stamped = {**entry, "apiVersion": writer.api_version, "time": writer.now}
            mine = (stamped if changed or removed else entry, kept, True)
            entries.append(mine)
        else:
            entries.append((entry, kept, kept != paths))
    if mine is None and changed:
        entries.append((writer.entry(changed), changed, False))  # already encoded
    return entries


def _set_managed_fields(meta: dict[str, Any], entries: list[_Entry], now: str) -> None:
    final = _finish(entries, now)
    if final:
        meta["managedFields"] = final
    else:
        meta.pop("managedFields", None)


def _same(a: Any, b: Any) -> bool:
    if a is _ITEM or b is _ITEM:
        return a is b
    return json_equal(a, b)


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

    Returns:
        The new object with ``metadata.managedFields`` updated.

    Raises:
        ApplyConflict: the apply changes fields other managers own and ``force`` is false.
    """
    top = root_type(group, kind)
    writer = _Writer(manager, "Apply", subresource, _api_version(applied, live), now)
    applied_set = set(_leaves(applied, top))
    base = json_copy(live) if live is not None else {}
    merged: dict[str, Any] = _merge_object(base, applied, top)
    modified = _diff(live, merged, top)[0] if live is not None else set(_leaves(merged, top))

    previous = _entries(live)
    mine_prev: set[Path] = set()
    others: list[tuple[dict[str, Any], set[Path]]] = []
    for entry in previous:
        paths = fields_to_paths(entry.get("fieldsV1"))
        if _entry_key(entry) == writer.key:
            mine_prev |= paths
        else:
            others.append((entry, paths))

    # conflicts: applied fields whose value changes and that another manager owns
    conflicts = _conflicts(others, manager, applied_set & modified)
    if conflicts and not force:
        raise ApplyConflict(conflicts)
    taken = {c.path for c in conflicts}
    owned_by_others: set[Path] = set().union(*(paths - taken for _, paths in others))
    _drop_omitted(merged, mine_prev - applied_set, owned_by_others)
    entries = _applied_entries(previous, writer, applied_set, taken)
    _set_managed_fields(merged.setdefault("metadata", {}), entries, now)
    return merged


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
    previous: list[dict[str, Any]], writer: _Writer, applied: set[Path], taken: set[Path]
) -> list[_Entry]:
    """An apply's entries: the writer's (in its old place, else last) owns exactly what it
    applied; the others lose what a forced apply took from them."""
    entries: list[_Entry] = []
    mine_written = False
    for entry in previous:
        if _entry_key(entry) == writer.key:
            if not mine_written:
                entries.append((writer.entry(applied), applied, False))
                mine_written = True
            continue
        paths = fields_to_paths(entry.get("fieldsV1"))
        kept = paths - taken
        entries.append((entry, kept, kept != paths))
    if not mine_written:
        entries.append((writer.entry(applied), applied, False))
    return entries
