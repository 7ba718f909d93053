"""``Unstructured``: an immutable, dict-backed object for CRDs and kinds without a model."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, NoReturn, overload

import msgspec

from .meta_v1 import ObjectMeta

__all__ = ["FrozenDict", "FrozenList", "Unstructured", "deep_copy", "freeze"]


def deep_copy(value: Any) -> Any:
    """A deep, mutable copy of a JSON-like value (dicts, lists, scalars; views are unwrapped)."""
    if isinstance(value, FrozenDict | FrozenList | Unstructured):
        value = value._data
    if isinstance(value, dict):
        return {k: deep_copy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [deep_copy(v) for v in value]
    return value


def freeze(value: Any) -> Any:
    """A read-only view of a JSON-like value (dicts and lists are wrapped, not copied)."""
    if isinstance(value, dict):
        return FrozenDict(value)
    if isinstance(value, list):
        return FrozenList(value)
    return value


def _read_only(self: object, *args: object) -> NoReturn:
    raise TypeError(
        f"{type(self).__name__} is read-only; use to_dict() for a mutable copy and "
        "Unstructured.from_dict() to build a changed object"
    )


class FrozenDict(Mapping[str, Any]):
    """A read-only view of a JSON object; nested dicts and lists are read-only views too."""

    __slots__ = ("_data",)
    _data: dict[str, Any]

    def __init__(self, data: dict[str, Any]) -> None:
        object.__setattr__(self, "_data", data)

    __setattr__ = _read_only
    __delattr__ = _read_only

    def __getitem__(self, key: str) -> Any:
        return freeze(self._data[key])

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenDict):
            return self._data == other._data
        if isinstance(other, dict):
            return self._data == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"FrozenDict({self._data!r})"

    def to_dict(self) -> dict[str, Any]:
        """A deep, mutable copy."""
        return deep_copy(self._data)  # type: ignore[no-any-return]


class FrozenList(Sequence[Any]):
    """A read-only view of a JSON array; nested values are read-only views too."""

    __slots__ = ("_data",)
    _data: list[Any]

    def __init__(self, data: list[Any]) -> None:
        object.__setattr__(self, "_data", data)

    __setattr__ = _read_only
    __delattr__ = _read_only

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> FrozenList: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return FrozenList(self._data[index])
        return freeze(self._data[index])

    def __len__(self) -> int:
        return len(self._data)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenList):
            return self._data == other._data
        if isinstance(other, list):
            return self._data == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"FrozenList({self._data!r})"

    def to_list(self) -> list[Any]:
        """A deep, mutable copy."""
        return deep_copy(self._data)  # type: ignore[no-any-return]


class Unstructured(Mapping[str, Any]):
    """An object of any kind, kept as the JSON the server sent (every field), read-only.

    ``obj["spec"]`` and ``obj.get("status")`` return read-only views (``FrozenDict`` /
    ``FrozenList``) whose nested values are read-only as well; ``.metadata`` is a real (frozen)
    ``ObjectMeta``. Change an object by editing ``to_dict()`` and building a new one with
    ``Unstructured.from_dict``. ``encode``/``decode``/``decoder`` handle it, also inside
    ``ObjectList[Unstructured]`` and ``WatchEvent[Unstructured]``.

    Guarantees: no public method mutates the object or hands out a mutable reference to its
    data; ``from_dict`` copies its input, so later changes to the caller's dict do not leak in.
    """

    __slots__ = ("_data", "_metadata")
    _data: dict[str, Any]
    _metadata: ObjectMeta | None

    def __init__(self, data: Mapping[str, Any]) -> None:
        """Copy ``data`` (a JSON object with at least ``apiVersion`` and ``kind``).

        Raises:
            TypeError: ``data`` is not a mapping.
        """
        if not isinstance(data, Mapping):
            raise TypeError(f"Unstructured needs a mapping, not {type(data).__name__}")
        object.__setattr__(self, "_data", deep_copy(dict(data)))
        object.__setattr__(self, "_metadata", None)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Unstructured:
        """Build from a dict (deep-copied)."""
        return cls(data)

    @classmethod
    def _wrap(cls, data: dict[str, Any]) -> Unstructured:
        # Takes ownership of a freshly decoded dict without copying it (decode path).
        self = cls.__new__(cls)
        object.__setattr__(self, "_data", data)
        object.__setattr__(self, "_metadata", None)
        return self

    __setattr__ = _read_only
    __delattr__ = _read_only

    @property
    def api_version(self) -> str:
        """``apiVersion`` (``""`` if missing)."""
        return str(self._data.get("apiVersion") or "")

    @property
    def kind(self) -> str:
        """``kind`` (``""`` if missing)."""
        return str(self._data.get("kind") or "")

    @property
    def metadata(self) -> ObjectMeta:
        """``metadata`` as a typed, frozen ``ObjectMeta`` (converted once, on first access).

        Raises:
            msgspec.ValidationError: the metadata does not have the shape of ObjectMeta.
            TypeError: a ``managedFields[].fieldsV1`` is not JSON-compatible.
        """
        meta = self._metadata
        if meta is None:
            meta = _object_meta(self._data.get("metadata") or {})
            object.__setattr__(self, "_metadata", meta)
        return meta

    def __getitem__(self, key: str) -> Any:
        return freeze(self._data[key])

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Unstructured):
            return self._data == other._data
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        meta = self._data.get("metadata") or {}
        ns = meta.get("namespace") if isinstance(meta, dict) else None
        name = meta.get("name") if isinstance(meta, dict) else None
        where = f"{ns}/{name}" if ns else name
        return f"Unstructured({self.api_version} {self.kind} {where})"

    def to_dict(self) -> dict[str, Any]:
        """A deep, mutable copy of every field."""
        return deep_copy(self._data)  # type: ignore[no-any-return]


def _object_meta(data: Any) -> ObjectMeta:
    """Convert a metadata dict to ``ObjectMeta`` in one pass, with the decoder's hooks, so the
    result equals decoding its JSON (about twice as fast as encoding it and decoding that).
    Only ``fieldsV1`` (kept as raw JSON bytes, like Go's ``FieldsV1``) is encoded:
    ``msgspec.convert`` cannot build a ``msgspec.Raw`` from a dict."""
    if isinstance(data, dict):
        entries = data.get("managedFields")
        if isinstance(entries, list) and entries:
            data = {**data, "managedFields": [_raw_fields_v1(entry) for entry in entries]}
    return msgspec.convert(data, ObjectMeta, dec_hook=_wire_dec_hook())


@functools.cache
def _wire_dec_hook() -> Callable[[Any, Any], Any]:
    # Imported on first use, not per call (an import statement costs more than the
    # conversion of a small ObjectMeta): _wire imports this module.
    from ._wire import _dec_hook

    return _dec_hook


def _raw_fields_v1(entry: Any) -> Any:
    if isinstance(entry, dict) and "fieldsV1" in entry:
        return {**entry, "fieldsV1": msgspec.Raw(msgspec.json.encode(entry["fieldsV1"]))}
    return entry
