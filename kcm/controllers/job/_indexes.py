"""Completion indexes of Indexed Jobs: the ``status.completedIndexes`` interval notation.

``"1,3-5"`` means indexes 1, 3, 4 and 5. Parsing ignores garbage and indexes outside
``[0, completions)``, as kube-controller-manager does.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["format_indexes", "parse_indexes"]


def parse_indexes(text: str | None, completions: int) -> set[int]:
    """The indexes in ``text`` that lie in ``[0, completions)``; malformed parts are skipped."""
    result: set[int] = set()
    if not text:
        return result
    for part in text.split(","):
        first, sep, last = part.strip().partition("-")
        try:
            lo = int(first)
            hi = int(last) if sep else lo
        except ValueError:
            continue
        lo = max(lo, 0)
        hi = min(hi, completions - 1)
        if lo <= hi:
            result.update(range(lo, hi + 1))
    return result


def format_indexes(indexes: Iterable[int]) -> str:
    """Sorted indexes in interval notation: ``{1, 3, 4, 5}`` gives ``"1,3-5"``, ``{0, 1}``
    gives ``"0,1"`` (a range needs three)."""
    parts: list[str] = []
    ordered = sorted(set(indexes))
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        if i == j:
            parts.append(str(ordered[i]))
        else:  # two in a row are listed, as kube-controller-manager writes them
            parts.append(f"{ordered[i]}{',' if j == i + 1 else '-'}{ordered[j]}")
        i = j + 1
    return ",".join(parts)
