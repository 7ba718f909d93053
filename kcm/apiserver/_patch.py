"""JSON patch (RFC 6902) and JSON merge patch (RFC 7386) as kube-apiserver applies them.

kube-apiserver applies ``application/json-patch+json`` with ``gopkg.in/evanphx/json-patch.v4``
and ``application/merge-patch+json`` with the same library's ``MergePatch``. This module
reproduces that library's behaviour, quirks included, and its error texts:

* ``replace`` of a missing *object key* succeeds and adds it (v4 does not check);
  ``replace`` of an out-of-range array index fails.
* ``test`` of a missing key succeeds only when the expected value is ``null``; numbers compare
  by value (``1 == 1.0``) and booleans never equal numbers.
* Array indices may be negative (counted from the end) and ``-`` appends; a path must start
  with ``/`` (the root itself cannot be patched); ``~1`` decodes to ``/`` and ``~0`` to ``~``.
* A failing operation raises :class:`PatchError` with ``code`` 422 (kube-apiserver answers
  ``422 Invalid`` "the server rejected our request due to an error in our request"); a patch
  document that is not a list of operations raises it with ``code`` 400 (BadRequest).

Inputs are never mutated and the results share no structure with them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from kcm.errors import KcmError

__all__ = [
    "MAX_JSON_PATCH_OPERATIONS",
    "PatchError",
    "apply_json_patch",
    "apply_merge_patch",
    "json_copy",
    "json_equal",
]

MAX_JSON_PATCH_OPERATIONS: Final = 10000
"""kube-apiserver's limit on the number of operations in one JSON patch."""

_INVALID_MESSAGE: Final = "the server rejected our request due to an error in our request"


class PatchError(KcmError):
    """A patch could not be applied; ``to_status()`` gives kube-apiserver's answer.

    Attributes:
        code: 422 when an operation failed (failed ``test``, missing path, bad index), 400 when
            the patch document itself is malformed, 413 for too many operations, 415 for a
            strategic merge patch of a kind that has none (custom resources).
        detail: the library's error text, e.g. ``testing value /a failed: test failed``.
    """

    def __init__(self, detail: str, *, code: int = 422) -> None:
        super().__init__(detail)
        self.detail = detail
        self.code = code

    def to_status(self) -> dict[str, Any]:
        """The Status dict kube-apiserver sends for this failure.

        A 422 carries kube-apiserver's generic message and empty details, as
        ``NewGenericServerResponse`` makes it: the library's text is not sent (kubectl prints
        the Status's message and causes).
        """
        simple = {
            400: ("BadRequest", self.detail),
            413: ("RequestEntityTooLarge", f"Request entity too large: {self.detail}"),
            415: ("UnsupportedMediaType", self.detail),
        }
        if self.code in simple:
            reason, message = simple[self.code]
            return {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": message,
                "reason": reason,
                "code": self.code,
            }
        return {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": _INVALID_MESSAGE,
            "reason": "Invalid",
            "details": {},
            "code": 422,
        }


# --------------------------------------------------------------------------------------------
# JSON helpers
# --------------------------------------------------------------------------------------------


def json_copy(value: Any) -> Any:
    """A deep copy of a JSON value (dicts, lists and scalars only); much faster than deepcopy."""
    if isinstance(value, dict):
        return {k: json_copy(v) if isinstance(v, dict | list) else v for k, v in value.items()}
    if isinstance(value, list):
        return [json_copy(v) if isinstance(v, dict | list) else v for v in value]
    return value


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: numbers by value, booleans distinct from numbers, deep for containers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict):
        if not isinstance(b, dict) or a.keys() != b.keys():
            return False
        return all(json_equal(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        if not isinstance(b, list) or len(a) != len(b):
            return False
        return all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


# --------------------------------------------------------------------------------------------
# RFC 6902
# --------------------------------------------------------------------------------------------


def _decode_token(token: str) -> str:
    if "~" not in token:
        return token
    return token.replace("~1", "/").replace("~0", "~")


def _find_container(doc: Any, path: str) -> tuple[Any, str] | None:
    """The container holding the last token of ``path`` and that token (json-patch findObject)."""
    if not path.startswith("/"):
        return None
    tokens = path.split("/")[1:]
    node = doc
    for raw in tokens[:-1]:
        token = _decode_token(raw)
        if isinstance(node, dict):
            node = node.get(token)
        elif isinstance(node, list):
            idx = _parse_index(token, len(node), allow_end=False)
            if idx is None:
                return None
            node = node[idx]
        else:
            return None
        if not isinstance(node, dict | list):
            return None
    if not isinstance(node, dict | list):
        return None
    return node, _decode_token(tokens[-1])


def _parse_index(token: str, length: int, *, allow_end: bool) -> int | None:
    try:
        idx = int(token)
    except ValueError:
        return None
    limit = length + 1 if allow_end else length
    if idx >= limit or idx < -limit:
        return None
    return idx + limit if idx < 0 else idx


def _array_index(token: str, length: int, *, allow_end: bool) -> int:
    try:
        idx = int(token)
    except ValueError:
        raise _OpError(
            f'strconv.Atoi: parsing "{token}": invalid syntax'
            if not allow_end
            else f"value was not a proper array index: '{token}': strconv.Atoi: "
            f'parsing "{token}": invalid syntax'
        ) from None
    limit = length + 1 if allow_end else length
    if idx >= limit or idx < -limit:
        raise _OpError(f"Unable to access invalid index: {idx}: invalid index referenced")
    return idx + limit if idx < 0 else idx


class _OpError(Exception):
    """An error from a container operation, wrapped by the operation with its path."""


def _get(container: Any, key: str) -> tuple[bool, Any]:
    if isinstance(container, dict):
        return (key in container), container.get(key)
    return True, container[_array_index(key, len(container), allow_end=False)]


def _add(container: Any, key: str, value: Any) -> None:
    if isinstance(container, dict):
        container[key] = value
    elif key == "-":
        container.append(value)
    else:
        container.insert(_array_index(key, len(container), allow_end=True), value)


def _remove(container: Any, key: str) -> Any:
    if isinstance(container, dict):
        if key not in container:
            raise _OpError(f"Unable to remove nonexistent key: {key}: missing value")
        return container.pop(key)
    return container.pop(_array_index(key, len(container), allow_end=False))


def _op_field(op: Mapping[str, Any], name: str, kind: str) -> str:
    value = op.get(name)
    if not isinstance(value, str):
        raise PatchError(f"{kind} operation failed to decode {name}: missing value")
    return value


def _apply_op(doc: Any, op: Mapping[str, Any]) -> None:
    kind = op.get("op")
    if not isinstance(kind, str) or kind not in _OPS:
        raise PatchError(f"Unexpected kind: {kind if isinstance(kind, str) else 'unknown'}")
    _OPS[kind](doc, op, kind)


def _located(
    doc: Any, op: Mapping[str, Any], kind: str, missing: str
) -> tuple[str, tuple[Any, str]]:
    """The op's ``path`` and its container; ``missing`` (with {path}) when there is none."""
    path = _op_field(op, "path", kind)
    found = _find_container(doc, path)
    if found is None:
        raise PatchError(missing.format(path=path))
    return path, found


def _op_add(doc: Any, op: Mapping[str, Any], kind: str) -> None:
    path, found = _located(
        doc, op, kind, 'add operation does not apply: doc is missing path: "{path}": missing value'
    )
    try:
        _add(*found, json_copy(op.get("value")))
    except _OpError as exc:
        raise PatchError(f"error in add for path: '{path}': {exc}") from None


def _op_remove(doc: Any, op: Mapping[str, Any], kind: str) -> None:
    path, found = _located(
        doc,
        op,
        kind,
        'remove operation does not apply: doc is missing path: "{path}": missing value',
    )
    try:
        _remove(*found)
    except _OpError as exc:
        raise PatchError(f"error in remove for path: '{path}': {exc}") from None


def _op_replace(doc: Any, op: Mapping[str, Any], kind: str) -> None:
    path, (container, key) = _located(
        doc,
        op,
        kind,
        "replace operation does not apply: doc is missing path: {path}: missing value",
    )
    value = json_copy(op.get("value"))
    if isinstance(container, dict):
        container[key] = value  # v4 replaces (or adds) any object key
        return
    try:
        container[_array_index(key, len(container), allow_end=False)] = value
    except _OpError:
        raise PatchError(
            f"replace operation does not apply: doc is missing key: {path}: missing value"
        ) from None


def _op_move_or_copy(doc: Any, op: Mapping[str, Any], kind: str) -> None:
    src = _op_field(op, "from", kind)
    path = _op_field(op, "path", kind)
    found = _find_container(doc, src)
    if found is None:
        raise PatchError(
            f"{kind} operation does not apply: doc is missing from path: {src}: missing value"
        )
    try:
        if kind == "move":
            value = _remove(*found)
        else:
            _, value = _get(*found)
            value = json_copy(value)
    except _OpError as exc:
        where = f"path: '{found[1]}'" if kind == "move" else f"from: '{src}'"
        raise PatchError(f"error in {kind} for {where}: {exc}") from None
    dest = _find_container(doc, path)
    if dest is None:
        raise PatchError(
            f"{kind} operation does not apply: doc is missing destination path: {path}: "
            "missing value"
        )
    try:
        _add(*dest, value)
    except _OpError as exc:
        if kind == "move":
            raise PatchError(f"error in move for path: '{path}': {exc}") from None
        raise PatchError(f"error while adding value during copy: {exc}") from None


def _op_test(doc: Any, op: Mapping[str, Any], kind: str) -> None:
    path, found = _located(
        doc, op, kind, "test operation does not apply: is missing path: {path}: missing value"
    )
    try:
        present, actual = _get(*found)
    except _OpError as exc:
        raise PatchError(f"error in test for path: '{path}': {exc}") from None
    expected = op.get("value")
    if not present or actual is None:
        if expected is None:
            return
    elif json_equal(actual, expected):
        return
    raise PatchError(f"testing value {path} failed: test failed")


_OPS: Final[dict[str, Callable[[Any, Mapping[str, Any], str], None]]] = {
    "add": _op_add,
    "remove": _op_remove,
    "replace": _op_replace,
    "move": _op_move_or_copy,
    "copy": _op_move_or_copy,
    "test": _op_test,
}


def apply_json_patch(doc: Any, ops: Any) -> Any:
    """Apply an RFC 6902 JSON patch the way kube-apiserver does.

    Args:
        doc: the current object (a JSON value, usually a dict); not mutated.
        ops: the decoded patch body: a list of ``{"op", "path", "from"?, "value"?}``.

    Returns:
        A new document; it shares no structure with ``doc`` or ``ops``.

    Raises:
        PatchError: code 400 when ``ops`` is not a list of objects; 413 when it has more than
            :data:`MAX_JSON_PATCH_OPERATIONS` entries; 422 when an operation fails (the detail
            is json-patch's text).
    """
    if not isinstance(ops, Sequence) or isinstance(ops, str | bytes):
        kind = "object" if isinstance(ops, Mapping) else type(ops).__name__
        raise PatchError(
            f"json: cannot unmarshal {kind} into Go value of type jsonpatch.Patch", code=400
        )
    if len(ops) > MAX_JSON_PATCH_OPERATIONS:
        raise PatchError(
            f"The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, "
            f"got {len(ops)}",
            code=413,
        )
    for op in ops:
        if not isinstance(op, Mapping):
            raise PatchError(
                "json: cannot unmarshal array element into Go value of type jsonpatch.Operation",
                code=400,
            )
    result = json_copy(doc)
    for op in ops:
        _apply_op(result, op)
    return result


# --------------------------------------------------------------------------------------------
# RFC 7386
# --------------------------------------------------------------------------------------------


def _prune_nulls(value: Any) -> Any:
    """A copy of a patch value with null object members removed (they delete nothing new)."""
    if isinstance(value, dict):
        return {k: _prune_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_prune_nulls(v) for v in value]
    return value


def _merge_into(target: dict[str, Any], patch: Mapping[str, Any]) -> None:
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
            continue
        current = target.get(key)
        if isinstance(current, dict) and isinstance(value, Mapping):
            _merge_into(current, value)
        else:
            target[key] = _prune_nulls(value)


def apply_merge_patch(doc: Any, patch: Any) -> Any:
    """Apply an RFC 7386 JSON merge patch (``application/merge-patch+json``).

    Objects merge recursively, ``null`` deletes a member, and every other value (lists
    included) replaces what was there. A patch that is not an object replaces the whole
    document, as RFC 7386 says.

    Args:
        doc: the current object; not mutated.
        patch: the decoded patch body; not mutated.

    Returns:
        A new document sharing no structure with the inputs.

    Raises:
        PatchError: code 400 for a ``null`` patch body ("Invalid JSON Patch", as json-patch).
    """
    if patch is None:
        raise PatchError("Invalid JSON Patch", code=400)
    if not isinstance(patch, Mapping):
        return _prune_nulls(patch)
    if not isinstance(doc, dict):
        return _prune_nulls(dict(patch))
    result: dict[str, Any] = json_copy(doc)
    _merge_into(result, patch)
    return result
