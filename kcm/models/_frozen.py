"""Read-only containers inside decoded models, so a cached object cannot be changed at all.

``frozen=True`` stops ``pod.metadata = ...`` but not ``pod.metadata.labels["x"] = "y"`` or
``pod.spec.containers.append(c)``: Python lists and dicts are mutable whatever holds them. An
informer hands the same object to every reader, so one such write would corrupt everybody's
view (client-go needs a mutation detector to catch it). Decoded models therefore hold:

* ``tuple`` for every JSON array (``containers``, ``finalizers``, ``ownerReferences``...). Tuples
  also help the cyclic GC: a tuple of ``gc=False`` Structs and strings is untracked at its
  first collection, so a large cache stops being rescanned.
* :class:`FrozenMap` (a ``dict`` subclass whose mutators raise ``TypeError``) for every JSON
  map (``labels``, ``annotations``, ``data``, ``resources.limits``...). Reads are plain ``dict``
  reads at C speed; ``dict(m)`` or ``m | {...}`` give mutable copies.
* read-only views (:class:`~kcm.models.FrozenDict`/:class:`~kcm.models.FrozenList`, as in
  ``Unstructured``) for free-form JSON fields (``ControllerRevision.data``, CRD schema
  defaults).

Statically the fields are typed ``Sequence[T]``, ``Mapping[K, V]`` and ``Any``, so objects you
build may still take lists and dicts (``ObjectMeta(labels={"app": "web"})``) and mypy flags
``labels["x"] = ...`` on any model. At run time the generated modules import the names below,
whose subscriptions resolve to the decode types (``Sequence[Pod]`` is ``tuple[Pod, ...]``).

Equality: ``FrozenMap`` equals a ``dict`` with the same items, and models compare a list and a
tuple with equal items as the same array (see ``K8sStruct``); only a bare field compared with a
list literal differs (``meta.finalizers == ("x",)``, not ``== ["x"]``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

__all__ = ["JSON", "FrozenMap", "Mapping", "Sequence"]

K = TypeVar("K")
V = TypeVar("V")


def _read_only(self: object, *args: object, **kwargs: object) -> NoReturn:
    raise TypeError(
        f"{type(self).__name__} is read-only: objects decoded from the API server (and shared "
        "by informer caches) cannot be changed in place; copy it with dict(...) and build a "
        "changed object with msgspec.structs.replace"
    )


class FrozenMap(dict[K, V]):
    """A ``dict`` that cannot be changed: the map fields of decoded models.

    Every read works as on a ``dict`` (and ``FrozenMap({"a": "1"}) == {"a": "1"}``); every
    write raises ``TypeError``. ``copy()``, ``dict(m)`` and ``m | other`` return plain dicts.
    """

    __slots__ = ()

    __setitem__ = _read_only
    __delitem__ = _read_only
    clear = _read_only
    pop = _read_only
    popitem = _read_only
    setdefault = _read_only
    update = _read_only
    __ior__ = _read_only

    def __repr__(self) -> str:
        return f"FrozenMap({dict.__repr__(self)})"

    def __copy__(self) -> FrozenMap[K, V]:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenMap[K, V]:
        import copy

        return FrozenMap({k: copy.deepcopy(v, memo) for k, v in self.items()})

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenMap, (dict(self),))


if TYPE_CHECKING:
    from collections.abc import Mapping as Mapping
    from collections.abc import Sequence as Sequence

    JSON = Any
else:

    class Sequence:
        """``Sequence[T]`` in a generated model decodes as ``tuple[T, ...]``."""

        def __class_getitem__(cls, item: Any) -> Any:
            return tuple[item, ...]

    class Mapping:
        """``Mapping[K, V]`` in a generated model decodes as ``FrozenMap[K, V]``."""

        def __class_getitem__(cls, item: Any) -> Any:
            return FrozenMap[item]

    class _AnyJSON(type):
        def __instancecheck__(cls, instance: object) -> bool:
            return True  # msgspec checks what the decode hook returns against the type

    class JSON(metaclass=_AnyJSON):
        """Free-form JSON in a generated model: decoded into read-only views."""
