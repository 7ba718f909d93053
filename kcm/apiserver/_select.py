"""Label and field selectors for list and watch: one matcher per request.

Parsing is ``kcm.selectors``; which fields each kind can be selected by, and their values,
come from :mod:`._fields` (plus a custom resource's selectable fields, from its strategy).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kcm.selectors import FieldSelector, LabelSelector, SelectorParseError

from ._fields import FieldSelectorNotSupported, field_getter, validate_field_selector
from ._registry import Resource
from ._status import StatusError
from ._strategy import strategy_for

__all__ = ["build_matcher"]

Obj = dict[str, Any]
Matcher = Callable[[Obj], bool]


def _parse_fields(selector: str, resource: Resource) -> Matcher:
    extra = strategy_for(resource).selectable_fields()
    parsed = FieldSelector.parse(selector)
    custom = resource.crd is not None
    try:
        validate_field_selector(parsed, resource.group, resource.kind, extra=extra, custom=custom)
    except FieldSelectorNotSupported as exc:
        raise StatusError.from_status(exc.to_status()) from exc
    group, kind = resource.group, resource.kind
    return lambda obj: parsed.matches(field_getter(obj, group, kind, extra=extra))


def build_matcher(resource: Resource, labels: str, fields: str) -> Matcher | None:
    """One predicate over whole objects for a ``labelSelector`` and ``fieldSelector``.

    Returns None when both are empty (everything matches).

    Raises:
        StatusError: 400 BadRequest for a selector that does not parse or names a field this
            kind cannot be selected by.
    """
    if not labels.strip() and not fields.strip():
        return None
    try:
        label_match = LabelSelector.parse(labels).matches if labels.strip() else None
        field_match = _parse_fields(fields, resource) if fields.strip() else None
    except SelectorParseError as exc:  # the text of Go's labels.Parse / fields.ParseSelector
        raise StatusError.bad_request(exc.detail) from exc

    def matches(obj: Obj) -> bool:
        if label_match is not None and not label_match(obj.get("metadata", {}).get("labels") or {}):
            return False
        return field_match is None or field_match(obj)

    return matches
