"""One kind's Table layout: its columns after NAME and a function from an object to its cells."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ._format import Obj

__all__ = ["Column", "Printer"]

Column = tuple[str, str, int]
"""(name, type, priority): priority 1 columns are the ones kubectl shows only with ``-o wide``
(the server always sends every column)."""


@dataclass(frozen=True)
class Printer:
    """A kind's columns and cells, without the NAME column, which :attr:`name_at` places:
    first for every kind but events, whose NAME is the last column and a wide one."""

    columns: tuple[Column, ...]
    cells: Callable[[Obj, datetime], list[Any]]
    name_at: int = 0
    display_name: Callable[[Obj], str] | None = None
    """What the NAME cell shows, when not just the name (a default storage class's
    ``standard (default)``)."""

    def name_of(self, obj: Obj) -> str:
        if self.display_name is not None:
            return self.display_name(obj)
        meta = obj.get("metadata")
        return str(meta.get("name", "")) if isinstance(meta, dict) else ""

    @property
    def name_priority(self) -> int:
        """NAME shows without ``-o wide`` unless it is placed after the other columns."""
        return 1 if self.name_at else 0
