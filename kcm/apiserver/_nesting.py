"""The nesting limit on request bodies: a deeply nested JSON or YAML body is a 400, not a 500.

kube-apiserver's decoders stop at depth 10000 (``exceeded max depth``); Python's decoders and
every recursive step after them (validation, merges, managedFields) stop at the interpreter's
recursion limit with a ``RecursionError``. So kcm checks depth once, on the raw body, before
any decoder sees it, with a lower limit (:data:`MAX_DEPTH`) that every later step can handle,
and answers with the text kube-apiserver writes for the same verb and content type.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ._status import StatusError

__all__ = [
    "MAX_DEPTH",
    "check_nesting",
    "deeper_than",
    "nesting_error",
    "summarize",
    "too_deep",
]

MAX_DEPTH = 256
"""The deepest array/object nesting kcm accepts (kube-apiserver: 10000)."""

_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_YAML_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|\'[^\']*(?:\'\'[^\']*)*\'', re.S)
_BRACKET = re.compile(rb"[\[\]{}]")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def _blank(match: re.Match[bytes]) -> bytes:
    return b"_" * len(match.group())


def too_deep(body: bytes, *, yaml: bool = False) -> int | None:
    """The offset of the first bracket nested deeper than :data:`MAX_DEPTH`, or None.

    Brackets inside quoted strings do not count; YAML's block (indented) nesting is not seen
    here (its decoder's ``RecursionError`` is mapped to the same answer).
    """
    if body.count(b"[") + body.count(b"{") <= MAX_DEPTH:
        return None  # the common case: too few brackets to go that deep
    text = (_YAML_STRING if yaml else _JSON_STRING).sub(_blank, body)
    depth = 0
    for match in _BRACKET.finditer(text):
        depth += _STEP[text[match.start()]]
        if depth > MAX_DEPTH:
            return match.start()
    return None


def deeper_than(value: object, limit: int = MAX_DEPTH) -> bool:
    """Whether a decoded value nests lists and dicts more than ``limit`` deep (iteratively:
    it is the check that must not recurse)."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Iterable[object] = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth + 1 > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def check_nesting(body: bytes, method: str, content_type: str, kind: str) -> None:
    """Raise kube-apiserver's error when ``body`` is nested too deeply for its verb.

    Raises:
        StatusError: 400 (500 for a DELETE's options, as kube-apiserver) with the decoder's
            ``exceeded max depth``.
    """
    yaml = "yaml" in content_type
    at = too_deep(body, yaml=yaml)
    if at is not None:
        raise nesting_error(body, at, method, content_type, kind)


def nesting_error(
    body: bytes, at: int | None, method: str, content_type: str, kind: str
) -> StatusError:
    """What kube-apiserver answers for a body too deep at offset ``at`` (None: somewhere in a
    YAML document's indentation)."""
    char = chr(body[at]) if at is not None else "["
    json_error = f"invalid character '{char}' exceeded max depth"
    line = body.count(b"\n", 0, at) + 1 if at is not None else 1
    yaml_error = f"yaml: line {line}: exceeded max depth of {MAX_DEPTH}"
    patch_type = content_type.split(";")[0].strip()
    if method == "PATCH":
        if patch_type == "application/apply-patch+yaml":
            return StatusError.bad_request(
                "error decoding YAML: error converting YAML to JSON: "
                f"yaml: exceeded max depth of {MAX_DEPTH}"
            )
        if patch_type == "application/merge-patch+json":
            return StatusError.bad_request("Invalid JSON Patch")
        return StatusError.bad_request(json_error)
    if method == "DELETE":
        return StatusError(500, "", f"couldn't get version/kind; json parse error: {json_error}")
    if "yaml" in patch_type:
        why = yaml_error
    else:
        why = f"couldn't get version/kind; json parse error: {json_error}"
    return StatusError.bad_request(
        f"the object provided is unrecognized (must be of type {kind}): {why} ({summarize(body)})"
    )


def summarize(data: bytes, max_length: int = 30) -> str:
    """The start of a body as kube-apiserver quotes it in a decoding error (hex unless it
    starts like a JSON object)."""
    if not data:
        return "<empty>"
    head = data[:max_length]
    text = head.decode("utf-8", "replace") if data[:1] == b"{" else head.hex()
    return text + " ..." if len(data) > max_length else text
