"""The one base class of every kcm model."""

from typing import Any

import msgspec
from msgspec.structs import astuple

__all__ = ["K8sStruct"]


def _same(x: Any, y: Any) -> bool:
    """Equal as Kubernetes sees it: a list and a tuple with equal items are the same array."""
    if x == y:
        return True
    if isinstance(x, list | tuple) and isinstance(y, list | tuple):
        return len(x) == len(y) and all(_same(a, b) for a, b in zip(x, y, strict=True))
    if isinstance(x, dict) and isinstance(y, dict):
        return x.keys() == y.keys() and all(_same(v, y[k]) for k, v in x.items())
    return False


class K8sStruct(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename="camel",
    frozen=True,
    gc=False,
    eq=False,
):
    """Base of every Kubernetes model.

    * ``kw_only``: fields are passed by name (``Pod(metadata=ObjectMeta(name="x"))``);
    * ``omit_defaults``: unset (``None``) fields are not encoded, like Go's ``omitempty``;
    * ``rename="camel"``: ``pod_ip`` is ``podIP`` on the wire (explicit names where camel-casing
      is not enough);
    * ``frozen``: a cached object cannot be changed in place; use ``msgspec.structs.replace``.
      Decoded arrays are tuples and maps :class:`~kcm.models.FrozenMap`, so nothing inside
      can change either (see ``kcm/models/_frozen.py``);
    * ``gc=False``: Kubernetes objects are trees (no reference cycles), so the cyclic garbage
      collector need not track millions of cached objects.

    Equality is by value, and an array is the same array whether it is a ``list`` (in an
    object you built) or a ``tuple`` (decoded): ``Pod(...built...) == decoded_pod`` holds when
    both say the same thing, as the status-unchanged checks of controllers need. Hashing works
    when every field is hashable (decoded objects without maps, such as an ``OwnerReference``).

    Caveat: fields the model does not know are dropped on decode. Write with PATCH or
    server-side apply, never PUT a decoded object back (see docs/models.md).
    """

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        mine, theirs = astuple(self), astuple(other)
        return mine == theirs or all(_same(a, b) for a, b in zip(mine, theirs, strict=True))

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(astuple(self))
