"""Request options as kube-apiserver decodes and validates them, with its messages.

Query parameters become typed options the way Go's parameter codec converts ``url.Values``:
a boolean is false only when absent, ``"0"`` or ``"false"`` (any case), so ``watch=yes`` and
``watch=`` are watches; integers go through ``strconv.ParseInt`` (``strconv.ParseInt: parsing
"two": invalid syntax``, 400); selectors are parsed as ``labels.Parse`` and
``fields.ParseSelector`` do (400 with their text). Then the options are validated
(``ValidateListOptions``, ``ValidateDeleteOptions``, ``ValidateCreateOptions``...: 422 Invalid
naming ``ListOptions.meta.k8s.io``), before the request's body is looked at.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kcm.selectors import FieldSelector, LabelSelector, SelectorParseError

from ._field_errors import Cause, forbidden, invalid, not_supported, too_long
from ._status import StatusError

__all__ = [
    "ListOptions",
    "Params",
    "delete_options",
    "go_bool",
    "go_int",
    "validate_write_options",
]

Params = Mapping[str, list[str]]
"""Every value of every query parameter, as ``parse_qs`` gives them."""

_INT = re.compile(r"[+-]?[0-9]+")
_INT64_MAX = 2**63 - 1
_FIELD_MANAGER_MAX = 128
_PROPAGATION = ["Foreground", "Background", "Orphan", "nil"]
_FIELD_VALIDATION = ["", "Ignore", "Strict", "Warn"]
_META = "meta.k8s.io"


def go_bool(values: list[str] | None) -> bool:
    """``Convert_Slice_string_To_bool``: absent, ``"0"`` and ``"false"`` (any case) are false;
    anything else, the empty string included, is true."""
    if not values:
        return False
    return not (values[0] == "0" or values[0].lower() == "false")


def go_int(text: str) -> int:
    """``strconv.ParseInt(text, 10, 64)``.

    Raises:
        StatusError: 400 with Go's message (invalid syntax, value out of range).
    """
    if not _INT.fullmatch(text):
        raise StatusError.bad_request(f"strconv.ParseInt: parsing {_quote(text)}: invalid syntax")
    value = int(text)
    if not -_INT64_MAX - 1 <= value <= _INT64_MAX:
        raise StatusError.bad_request(
            f"strconv.ParseInt: parsing {_quote(text)}: value out of range"
        )
    return value


_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}


def _quote(text: str) -> str:
    """Go's ``strconv.Quote`` (``%q``): printable text as is, the rest escaped."""
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


def _first(params: Params, name: str) -> str | None:
    values = params.get(name)
    return values[0] if values else None


def _invalid_options(kind: str, causes: list[Cause]) -> StatusError:
    """``errors.NewInvalid(meta.k8s.io/<kind>, "", errs)``."""
    return StatusError.invalid(_META, kind, "", [dict(c) for c in causes])


@dataclass(frozen=True, slots=True)
class ListOptions:
    """The options of a list, watch or deletecollection (``metainternalversion.ListOptions``)."""

    label_selector: str = ""
    field_selector: str = ""
    watch: bool = False
    allow_watch_bookmarks: bool = False
    resource_version: str = ""
    resource_version_match: str = ""
    timeout_seconds: int | None = None
    limit: int = 0
    continue_token: str = ""
    send_initial_events: bool | None = None

    @classmethod
    def parse(cls, params: Params, *, watch: bool = False) -> ListOptions:
        """Decode and validate (``watch``: the path is a watch whatever the query says).

        Raises:
            StatusError: 400 for a value that does not convert (a number, a selector), 422
                for options that do not go together.
        """
        timeout = _first(params, "timeoutSeconds")
        limit = _first(params, "limit")
        initial = params.get("sendInitialEvents")
        options = cls(
            label_selector=_first(params, "labelSelector") or "",
            field_selector=_first(params, "fieldSelector") or "",
            watch=watch or go_bool(params.get("watch")),
            allow_watch_bookmarks=go_bool(params.get("allowWatchBookmarks")),
            resource_version=_first(params, "resourceVersion") or "",
            resource_version_match=_first(params, "resourceVersionMatch") or "",
            timeout_seconds=go_int(timeout) if timeout is not None else None,
            limit=go_int(limit) if limit is not None else 0,
            continue_token=_first(params, "continue") or "",
            send_initial_events=go_bool(initial) if initial is not None else None,
        )
        _check_selectors(options.label_selector, options.field_selector)
        causes = options._errors()
        if causes:
            raise _invalid_options("ListOptions", causes)
        return options

    def _errors(self) -> list[Cause]:
        """``ValidateListOptions`` (1.24), and the rules of ``sendInitialEvents`` (1.27+):
        with it a watch may, and must, say ``resourceVersionMatch=NotOlderThan``."""
        causes: list[Cause] = []
        match = self.resource_version_match
        field = "resourceVersionMatch"
        if self.send_initial_events is not None:
            if not self.watch:
                causes.append(
                    forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list")
                )
            elif match != "NotOlderThan":
                causes.append(
                    forbidden(
                        "sendInitialEvents",
                        "sendInitialEvents is forbidden for watch unless resourceVersionMatch is "
                        "set to NotOlderThan",
                    )
                )
        watch_list = self.watch and self.send_initial_events is not None
        if match:
            if self.watch and not watch_list:
                causes.append(forbidden(field, "resourceVersionMatch is forbidden for watch"))
            if not self.resource_version and not watch_list:
                causes.append(
                    forbidden(
                        field,
                        "resourceVersionMatch is forbidden unless resourceVersion is provided",
                    )
                )
            if self.continue_token:
                causes.append(
                    forbidden(field, "resourceVersionMatch is forbidden when continue is provided")
                )
            if match not in ("Exact", "NotOlderThan"):
                causes.append(not_supported(field, match, ["Exact", "NotOlderThan", ""]))
            if match == "Exact" and self.resource_version == "0":
                causes.append(
                    forbidden(
                        field, 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'
                    )
                )
        return causes


def _check_selectors(labels: str, fields: str) -> None:
    """Selectors that do not parse: 400 with the text of Go's parsers."""
    try:
        LabelSelector.parse(labels)
        FieldSelector.parse(fields)
    except SelectorParseError as exc:
        raise StatusError.bad_request(exc.detail) from exc


def delete_options(body: Any, params: Params) -> dict[str, Any]:
    """The DeleteOptions of a DELETE: the body's when there is one, else the query's (kube
    reads one or the other, never both), validated.

    Raises:
        StatusError: 400 for a query value that does not convert, 422 for options that are
            not allowed (an unknown ``propagationPolicy``; ``orphanDependents`` with one).
    """
    if body is not None:
        options = dict(body) if isinstance(body, Mapping) else {}
    else:
        options = {}
        grace = _first(params, "gracePeriodSeconds")
        if grace is not None:
            options["gracePeriodSeconds"] = go_int(grace)
        if "orphanDependents" in params:
            options["orphanDependents"] = go_bool(params["orphanDependents"])
        policy = _first(params, "propagationPolicy")
        if policy is not None:
            options["propagationPolicy"] = policy
        if "dryRun" in params:
            options["dryRun"] = list(params["dryRun"])
    causes: list[Cause] = []
    policy = options.get("propagationPolicy")
    if options.get("orphanDependents") is not None and policy is not None:
        causes.append(
            invalid(
                "propagationPolicy",
                policy,
                "orphanDependents and deletionPropagation cannot be both set",
            )
        )
    if policy is not None and policy not in _PROPAGATION[:3]:
        causes.append(not_supported("propagationPolicy", policy, _PROPAGATION))
    causes += _dry_run_errors(options.get("dryRun"))
    if causes:
        raise _invalid_options("DeleteOptions", causes)
    return options


def validate_write_options(params: Params, kind: str, *, patch_type: str = "") -> None:
    """``ValidateCreateOptions``/``ValidateUpdateOptions``/``ValidatePatchOptions`` (``kind``:
    ``CreateOptions``, ``UpdateOptions`` or ``PatchOptions``; ``patch_type`` the patch's
    content type).

    Raises:
        StatusError: 422 for a fieldManager too long or not printable, a dryRun other than
            All, an unknown fieldValidation, ``force`` on a patch that is not an apply, or an
            apply without a fieldManager.
    """
    manager = _first(params, "fieldManager") or ""
    causes: list[Cause] = []
    if kind == "PatchOptions":
        if patch_type != "application/apply-patch+yaml":
            if "force" in params:
                causes.append(forbidden("force", "may not be specified for non-apply patch"))
        elif not manager:
            causes.append(
                {
                    "reason": "FieldValueRequired",
                    "message": "Required value: is required for apply patch",
                    "field": "fieldManager",
                }
            )
    if len(manager.encode()) > _FIELD_MANAGER_MAX:
        causes.append(too_long("fieldManager", _FIELD_MANAGER_MAX))
    causes += [
        {
            "reason": "FieldValueInvalid",
            "message": f"Invalid value: {_quote(manager)}: invalid character {_go_rune(ch)} "
            f"(at position {i})",
            "field": "fieldManager",
        }
        for i, ch in _char_positions(manager)
        if not ch.isprintable()
    ]
    causes += _dry_run_errors(params.get("dryRun"))
    validation = _first(params, "fieldValidation") or ""
    if validation not in _FIELD_VALIDATION:
        causes.append(not_supported("fieldValidation", validation, _FIELD_VALIDATION))
    if causes:
        raise _invalid_options(kind, causes)


def _dry_run_errors(dry_run: Any) -> list[Cause]:
    """``ValidateDryRun``: every value must be ``All``."""
    if dry_run is None:
        return []
    values = dry_run if isinstance(dry_run, list) else [dry_run]
    if all(v == "All" for v in values):
        return []
    return [not_supported("dryRun", [str(v) for v in values], ["All"])]


def _char_positions(text: str) -> list[tuple[int, str]]:
    """Each character with its byte offset (Go ranges over a string by bytes)."""
    out = []
    offset = 0
    for ch in text:
        out.append((offset, ch))
        offset += len(ch.encode())
    return out


def _go_rune(ch: str) -> str:
    """Go's ``%#U``: ``U+0007`` (and ``'x'`` after it for a printable rune)."""
    code = f"U+{ord(ch):04X}"
    return f"{code} '{ch}'" if ch.isprintable() else code
