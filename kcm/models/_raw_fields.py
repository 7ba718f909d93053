"""Raw JSON fields (``managedFields[].fieldsV1``): owned by the decoded object, and shared.

A ``msgspec.Raw`` decoded from a response is a view into the response's buffer, so a cached
pod would pin its whole 500-pod LIST page: each one is copied out. The copies are mostly the
same bytes, since ``fieldsV1`` lists the field paths a manager owns, not their values: every
pod of a ReplicaSet carries the same two or three. A Raw is immutable, so identical copies are
one shared object, which saves the bytes and the object of each entry (about 0.5 KB per pod
in the informer benchmark's pods; real pods' ``fieldsV1`` are larger).
"""

from __future__ import annotations

import msgspec

__all__ = ["shared_raw"]

_SHARED: dict[bytes, msgspec.Raw] = {}
_MAX_SHARED = 4096
"""Distinct values kept for sharing (cleared when full: a miss only costs a copy)."""


def shared_raw(raw: msgspec.Raw) -> msgspec.Raw:
    """A Raw with ``raw``'s bytes that owns them: the one already made for equal bytes, if any."""
    data = bytes(raw)
    if not data:
        return raw  # the field's default (absent): kept as is, so encoding still omits it
    shared = _SHARED.get(data)
    if shared is None:
        if len(_SHARED) >= _MAX_SHARED:
            _SHARED.clear()
        shared = _SHARED[data] = msgspec.Raw(data)
    return shared
