"""Store keys: :class:`kcm.models.ObjectKey` ``(namespace, name)`` rather than ``"ns/name"``
strings (D19)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kcm.models import ObjectKey, object_key

__all__ = ["KeyFunc", "meta_namespace_key"]

KeyFunc = Callable[[Any], ObjectKey]
"""Maps an object to its store key."""

meta_namespace_key: KeyFunc = object_key
"""The default key: ``ObjectKey(metadata.namespace or "", metadata.name)``; raises ValueError
for an object without a name."""
