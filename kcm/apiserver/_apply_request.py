"""A server-side apply request checked as kube-apiserver checks it, with its errors.

In kube-apiserver's order: ``PatchOptions`` need a field manager (422); the body is YAML
(400, go-yaml's message); the fieldmanager then wants the resource's apiVersion (400), a kind
it has a type for (500) and the resource's kind (500: its merge of two types fails); and the
merged object must keep the URL's name (400).
"""

from __future__ import annotations

import json
from typing import Any, Final

import yaml

from ._field_errors import required
from ._nesting import deeper_than, nesting_error
from ._registry import Resource
from ._status import StatusError
from ._store import Obj

__all__ = ["check_applied", "check_apply_options", "check_name", "decode_apply_body"]

_GO_POINTER: Final = "0xc000000000"
_TOO_DEEP: Final = object()
"""Where Go's ``%v`` of a TypeRef prints the address of its name (the normaliser masks it)."""

# PyYAML's problem texts and the ones go-yaml (libyaml's) gives for the same mistake.
_GO_YAML: Final = (
    ("expected ',' or ']'", "did not find expected ',' or ']'"),
    ("expected ',' or '}'", "did not find expected ',' or '}'"),
    ("mapping values are not allowed here", "mapping values are not allowed in this context"),
    ("could not find expected ':'", "could not find expected ':'"),
    ("found character that cannot start any token", "found character that cannot start any token"),
    ("expected <block end>, but found '-'", "did not find expected key"),
    ("expected <block end>, but found '<block sequence start>'", "did not find expected key"),
    ("expected <block end>", "did not find expected key"),
    ("expected <block mapping end>", "did not find expected key"),
    ("found unexpected end of stream", "found unexpected end of stream"),
    ("found undefined alias", "unknown anchor"),
)


def check_apply_options(query: dict[str, str]) -> None:
    """``ValidatePatchOptions``: an apply names its field manager."""
    if not query.get("fieldManager"):
        raise StatusError.invalid(
            "meta.k8s.io",
            "PatchOptions",
            "",
            [required("fieldManager", "is required for apply patch")],
        )


def _go_yaml_error(exc: yaml.YAMLError) -> str:
    problem = str(getattr(exc, "problem", "") or exc)
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    for python, go in _GO_YAML:
        if problem.startswith(python):
            problem = go
            break
    if mark is None:
        return f"yaml: {problem}"
    return f"yaml: line {mark.line + 1}: {problem}"


def decode_apply_body(raw: bytes) -> Obj:
    """The applied configuration: a YAML (or JSON) object, made JSON-clean."""
    try:
        applied = yaml.safe_load(raw or b"")
    except yaml.YAMLError as exc:
        raise StatusError.bad_request(
            f"error decoding YAML: error converting YAML to JSON: {_go_yaml_error(exc)}"
        ) from exc
    except RecursionError:
        applied = _TOO_DEEP
    if applied is _TOO_DEEP or deeper_than(applied):
        raise nesting_error(raw, None, "PATCH", "application/apply-patch+yaml", "")
    if applied is None:
        applied = {}
    if not isinstance(applied, dict):
        kind = "array" if isinstance(applied, list) else type(applied).__name__
        raise StatusError.bad_request(
            f"error decoding YAML: json: cannot unmarshal {kind} into Go value of type "
            "map[string]interface {}"
        )
    clean: Obj = json.loads(json.dumps(applied, default=str))
    return clean


def check_applied(res: Resource, ns: str, name: str, applied: Obj) -> None:
    """What the fieldmanager refuses before it merges (version, kind, managedFields)."""
    api_version = str(applied.get("apiVersion") or "")
    kind = str(applied.get("kind") or "")
    if api_version != res.api_version:
        raise StatusError.bad_request(
            "Incorrect version specified in apply patch. Specified patch version: "
            f"{api_version}, expected: {res.api_version}"
        )
    meta: Any = applied.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    if meta.get("managedFields") is not None:
        raise StatusError.bad_request("metadata.managedFields must be nil")
    if not kind:
        where = f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"
        gvk = f"{res.group}/{res.version}, Kind={kind}"
        raise StatusError(
            500,
            "",
            f"failed to create typed patch object ({where}; {gvk}): no corresponding type for "
            f"{gvk}",
        )
    if kind != res.kind:
        ref = f"{{{_GO_POINTER} {{<nil> <nil> <nil>}}}}"
        raise StatusError(
            500,
            "",
            f"failed to merge config: expected objects of the same type, but got {ref} and {ref}",
        )


def check_name(name: str, merged: Obj) -> None:
    """The merged object keeps the URL's name (``checkName``)."""
    got = (merged.get("metadata") or {}).get("name")
    if got and got != name:
        raise StatusError.bad_request(
            f"the name of the object ({got}) does not match the name on the URL ({name})"
        )
