"""Immutable fields: the ``field is immutable`` errors of ``ValidateUpdate``."""

from __future__ import annotations

from collections.abc import Mapping

from .._field_errors import Cause, go_label_selector, go_value
from .._store import Obj

__all__ = ["immutable_selector"]


def immutable_selector(new: Obj, old: Obj) -> list[Cause]:
    """``spec.selector`` may not change once set (workloads and Jobs)."""
    old_sel = (old.get("spec") or {}).get("selector")
    new_sel = (new.get("spec") or {}).get("selector")
    if old_sel is None or new_sel == old_sel:
        return []
    shown = go_label_selector(new_sel) if isinstance(new_sel, Mapping) else go_value(new_sel)
    return [
        {
            "reason": "FieldValueInvalid",
            "message": f"Invalid value: {shown}: field is immutable",
            "field": "spec.selector",
        }
    ]
