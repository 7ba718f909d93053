"""EndpointSlices: a kept generation, and ``endpoints``/``ports`` as kube-apiserver reads
them back from storage."""

from __future__ import annotations

from ..._store import Obj
from .._base import GenerationalStrategy

__all__ = ["EndpointSliceStrategy"]


class EndpointSliceStrategy(GenerationalStrategy):
    """kube-apiserver's ``pkg/registry/discovery/endpointslice``.

    kube-apiserver stores EndpointSlices as protobuf, which has no empty list apart from a
    missing one: a slice written with ``endpoints: []`` (as the endpointslice controllers
    write an empty one) is read back, and answered, with ``endpoints: null``; the two fields
    have no ``omitempty``, so a missing one is written ``null`` too.
    """

    def canonicalize(self, obj: Obj) -> None:
        super().canonicalize(obj)
        for key in ("endpoints", "ports"):
            if not obj.get(key):
                obj[key] = None
