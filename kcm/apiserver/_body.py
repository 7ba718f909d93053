"""The body of a create or update of a built-in kind, decoded as kube-apiserver decodes it.

kube-apiserver picks a decoder by ``Content-Type`` (JSON, YAML or protobuf; anything else is
415), reads the body's ``apiVersion`` and ``kind`` (the URL's kind where they are missing),
decodes the body into that kind's Go struct and converts it to the URL's kind. Every failure
is a 400 whose message says which step failed, exactly as ``transformDecodeError`` words it:

- the body is not JSON/YAML: ``the object provided is unrecognized (must be of type
  ConfigMap): couldn't get version/kind; json parse error: ... (<the body, summarized>)``;
- it does not decode: ``Deployment in version "v1" cannot be handled as a Deployment: json:
  cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32``;
- it is another kind: ``no kind "Bogus" is registered ...`` or ``converting (v1.Secret) to
  (core.ConfigMap): unknown conversion``; the URL's kind in another version: ``the API version
  in the data (apps/v1beta1) does not match the expected API version (apps/v1)``.

What comes out is what Go would write back: unknown fields dropped, times in UTC, quantities
canonical (see :mod:`._typed_decode`).
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from kcm.models import model_for

from ._field_errors import invalid
from ._go_json import JsonObject, JsonSyntaxError, parse_json
from ._go_yaml import YamlError, parse_yaml
from ._registry import Resource
from ._status import StatusError
from ._store import Obj
from ._typed_decode import DecodeFailure, decode_typed

__all__ = ["decode_object", "decode_patched"]

_MEDIA_TYPES: Final = (
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
)
_FIND_KIND: Final = (
    'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
    'Kind string "json:\\"kind,omitempty\\"" }'
)
_SCHEME: Final = "pkg/api/legacyscheme/scheme.go:31"
_VERSION: Final = re.compile(r"^v[0-9]+((alpha|beta)[0-9]+)?$")


def _summary(body: bytes, limit: int = 30) -> str:
    """How kube-apiserver quotes a body it cannot read (``summarizeData``)."""
    if not body:
        return "<empty>"
    if body[:1] == b"{":
        text = body[:limit].decode("utf-8", errors="replace")
        return text + " ..." if len(body) > limit else text
    return body[:limit].hex() + (" ..." if len(body) > limit else "")


def _unrecognized(kind: str, why: str, body: bytes) -> StatusError:
    return StatusError.bad_request(
        f"the object provided is unrecognized (must be of type {kind}): {why} ({_summary(body)})"
    )


def _media_type(content_type: str) -> str:
    media = content_type.split(";", 1)[0].strip().lower()
    return media or "application/json"


def _parse(body: bytes, media: str, kind: str) -> Any:
    if media not in _MEDIA_TYPES:
        raise StatusError(
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types include: "
            + ", ".join(_MEDIA_TYPES),
        )
    data = body
    if media == "application/yaml":
        try:
            converted = parse_yaml(body)
        except YamlError as exc:
            raise _unrecognized(kind, str(exc), body) from None
        return converted
    try:
        return parse_json(data)
    except JsonSyntaxError as exc:
        raise _unrecognized(
            kind, f"couldn't get version/kind; json parse error: {exc}", body
        ) from None


def _type_meta(value: Any, kind: str, body: bytes) -> tuple[str, str]:
    """The body's ``apiVersion`` and ``kind`` (Go's ``SimpleMetaFactory.Interpret``)."""
    if value is None:
        return "", ""
    if not isinstance(value, JsonObject | dict):
        shown = {list: "array", str: "string", bool: "bool"}.get(type(value), "number")
        why = f"json: cannot unmarshal {shown} into Go value of type {_FIND_KIND}"
        raise _unrecognized(kind, f"couldn't get version/kind; json parse error: {why}", body)
    found = {"apiVersion": "", "kind": ""}
    items = value if isinstance(value, JsonObject) else value.items()
    for key, item in items:
        if key not in found or item is None:
            continue
        if not isinstance(item, str):
            shown = "bool" if isinstance(item, bool) else "number"
            if isinstance(item, list):
                shown = "object" if isinstance(item, JsonObject) else "array"
            if isinstance(item, dict):
                shown = "object"
            why = f"json: cannot unmarshal {shown} into Go struct field .{key} of type string"
            raise _unrecognized(kind, f"couldn't get version/kind; json parse error: {why}", body)
        found[key] = item
    return found["apiVersion"], found["kind"]


def _group_version(api_version: str, kind: str, body: bytes) -> tuple[str, str]:
    """``schema.ParseGroupVersion``."""
    if not api_version:
        return "", ""
    if api_version.count("/") > 1:
        raise _unrecognized(kind, f"unexpected GroupVersion string: {api_version}", body)
    if "/" not in api_version:
        return "", api_version
    group, version = api_version.split("/")
    return group, version


def _internal_package(group: str) -> str:
    """The Go package of a group's internal types (``core`` for the legacy group)."""
    return group.split(".", 1)[0] if group else "core"


def _model(api_version: str, kind: str) -> Any:
    try:
        return model_for(api_version, kind)
    except KeyError:
        return None


def decode_object(
    res: Resource, body: bytes, content_type: str, *, expected: tuple[str, str] | None = None
) -> Obj:
    """The body of a create or update of ``res`` as the object kube-apiserver would store.

    Args:
        expected: ``(apiVersion, kind)`` the URL takes when it is not ``res``'s own (a
            subresource such as ``scale``).

    Raises:
        StatusError: 415 for a media type kube-apiserver does not decode, 400 for a body it
            cannot read, as kube-apiserver words it.
    """
    want_version, want_kind = expected or (res.api_version, res.kind)
    want_group, want_v = _group_version(want_version, want_kind, body)
    value = _parse(body, _media_type(content_type), want_kind)
    api_version, kind = _type_meta(value, want_kind, body)
    group, version = _group_version(api_version, want_kind, body)
    kind = kind or want_kind
    if not version and not group:
        group, version = want_group, want_v
    elif not version and group == want_group:
        version = want_v
    body_version = f"{group}/{version}" if group else version
    model = _model(body_version, kind)
    same_kind = (group, kind) == (want_group, want_kind)
    if model is None and not (same_kind and _VERSION.match(version)):
        raise StatusError.bad_request(
            f'{kind} in version "{version}" cannot be handled as a {want_kind}: no kind '
            f'"{kind}" is registered for version "{body_version}" in scheme "{_SCHEME}"'
        )
    if model is not None:
        try:
            decoded = decode_typed(model, value if value is not None else JsonObject())
        except DecodeFailure as exc:
            raise StatusError.bad_request(
                f'{kind} in version "{version}" cannot be handled as a {want_kind}: {exc}'
            ) from None
    if not same_kind:
        assert model is not None
        package = model.__module__.rsplit("_", 1)[-1]
        raise StatusError.bad_request(
            f'{kind} in version "{version}" cannot be handled as a {want_kind}: converting '
            f"({package}.{kind}) to ({_internal_package(want_group)}.{want_kind}): unknown "
            "conversion"
        )
    if body_version != want_version:
        raise StatusError.bad_request(
            f"the API version in the data ({body_version}) does not match the expected API "
            f"version ({want_version})"
        )
    decoded.pop("kind", None)
    decoded.pop("apiVersion", None)
    return {"apiVersion": want_version, "kind": want_kind, **decoded}


def decode_patched(res: Resource, patched: Obj) -> Obj:
    """An object a JSON, merge or strategic merge patch made, decoded as kube-apiserver
    decodes it; one that does not decode is a 422 whose cause quotes the patched object."""
    model = _model(res.api_version, res.kind) if res.crd is None else None
    if model is None:
        return patched
    try:
        decoded = decode_typed(model, patched)
    except DecodeFailure as exc:
        text = json.dumps(patched, separators=(",", ":"), ensure_ascii=False)
        cause = invalid("patch", text, str(exc))
        raise StatusError(
            422,
            "Invalid",
            f' "" is invalid: patch: {cause["message"]}',
            details={"causes": [cause]},
        ) from None
    decoded.pop("kind", None)
    decoded.pop("apiVersion", None)
    return {"apiVersion": res.api_version, "kind": res.kind, **decoded}
