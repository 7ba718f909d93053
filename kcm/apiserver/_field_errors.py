"""Field errors as kube-apiserver reports them: Status causes and the 422 Invalid Status.

A cause is ``{"reason": "FieldValueInvalid", "message": <ErrorBody>, "field": "metadata.name"}``
(``k8s.io/apimachinery/pkg/util/validation/field``); :func:`invalid_status` aggregates causes
into the Status kube-apiserver sends, e.g.::

    Pod "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123
    subdomain must consist of ...

Values print as Go prints them (``%q`` strings, ``%#v`` maps), so messages match byte for byte.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = [
    "Cause",
    "duplicate",
    "forbidden",
    "go_label_selector",
    "go_value",
    "invalid",
    "invalid_shown",
    "invalid_status",
    "not_supported",
    "required",
    "too_long",
]

Cause = dict[str, str]


def go_value(value: Any) -> str:
    """How ``field.Error.ErrorBody`` prints a bad value (``%q`` strings, ``%#v`` maps)."""
    if value is None:
        return '"null"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        items = ", ".join(f"{json.dumps(k)}:{json.dumps(v)}" for k, v in sorted(value.items()))
        return "map[string]string{" + items + "}"
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "[]string{" + ", ".join(json.dumps(v) for v in value) + "}"
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _cause(reason: str, field: str, body: str) -> Cause:
    return {"reason": reason, "message": body, "field": field}


def required(field: str, detail: str = "") -> Cause:
    """``field.Required``: ``<field>: Required value[: detail]``."""
    return _cause("FieldValueRequired", field, "Required value" + (f": {detail}" if detail else ""))


def forbidden(field: str, detail: str) -> Cause:
    """``field.Forbidden``: ``<field>: Forbidden: detail``."""
    return _cause("FieldValueForbidden", field, f"Forbidden: {detail}")


def too_long(field: str, limit: int) -> Cause:
    """``field.TooLong``: ``<field>: Too long: must have at most N bytes`` (kube 1.24's text;
    newer releases say "may not be more than N bytes")."""
    return _cause("FieldValueTooLong", field, f"Too long: must have at most {limit} bytes")


def invalid(field: str, value: Any, detail: str = "") -> Cause:
    """``field.Invalid``: ``<field>: Invalid value: "<value>": detail``."""
    body = f"Invalid value: {go_value(value)}" + (f": {detail}" if detail else "")
    return _cause("FieldValueInvalid", field, body)


def invalid_shown(field: str, shown: str, detail: str) -> Cause:
    """``field.Invalid`` of a value already printed as Go prints it (``%#v`` of a struct)."""
    return _cause("FieldValueInvalid", field, f"Invalid value: {shown}: {detail}")


def duplicate(field: str, value: Any) -> Cause:
    """``field.Duplicate``: ``<field>: Duplicate value: "<value>"``."""
    return _cause("FieldValueDuplicate", field, f"Duplicate value: {go_value(value)}")


def not_supported(field: str, value: Any, supported: list[str]) -> Cause:
    """``field.NotSupported``: ``Unsupported value: "x": supported values: "a", "b"``."""
    body = f"Unsupported value: {go_value(value)}"
    if supported:
        body += ": supported values: " + ", ".join(json.dumps(s) for s in supported)
    return _cause("FieldValueNotSupported", field, body)


def invalid_status(causes: list[Cause], *, kind: str, name: str, group: str = "") -> dict[str, Any]:
    """The 422 Invalid Status kube-apiserver sends (``errors.NewInvalid``).

    The message is ``<Kind[.group]> "<name>" is invalid: <error>`` for one error and
    ``... is invalid: [<error>, <error>]`` for several (duplicates dropped, as Go's aggregate).
    """
    seen: set[str] = set()
    texts: list[str] = []
    for c in causes:
        text = f"{c['field']}: {c['message']}" if c.get("field") else c["message"]
        if text not in seen:
            seen.add(text)
            texts.append(text)
    aggregate = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    qualified = f"{kind}.{group}" if group else kind
    details: dict[str, Any] = {"name": name}
    if group:
        details["group"] = group
    details["kind"] = kind
    details["causes"] = [dict(c) for c in causes]
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'{qualified} "{name}" is invalid: {aggregate}',
        "reason": "Invalid",
        "details": details,
        "code": 422,
    }


def go_label_selector(selector: Mapping[str, Any]) -> str:
    """How Go prints a ``metav1.LabelSelector`` with ``%#v`` (in selector error messages)."""
    labels = selector.get("matchLabels")
    exprs = selector.get("matchExpressions")
    ml = (
        "map[string]string(nil)"
        if labels is None
        else go_value(labels)
        if labels
        else "map[string]string{}"
    )
    me = "[]v1.LabelSelectorRequirement(nil)" if exprs is None else f"{json.dumps(exprs)}"
    return f"v1.LabelSelector{{MatchLabels:{ml}, MatchExpressions:{me}}}"
