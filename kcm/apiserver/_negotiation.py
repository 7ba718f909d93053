"""What ``Accept`` asks a resource response to be converted to (``as=...;g=...;v=...``).

kube-apiserver's negotiation: the media ranges of ``Accept``, most preferred first, each
matched against the media types a resource is served in; the first range that matches and
whose conversion the server offers wins. The conversions offered are ``Table`` (JSON and YAML
only), ``PartialObjectMetadata`` and ``PartialObjectMetadataList``, all in ``meta.k8s.io``
``v1`` or ``v1beta1``. No range acceptable: 406. A conversion that does not fit the result
(a list asked for as one object, or the other way round) is refused later, also with a 406,
by :func:`partial_object_metadata` and :func:`partial_object_metadata_list`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._registry import Resource
from ._status import StatusError

__all__ = [
    "Conversion",
    "negotiate",
    "partial_object_metadata",
    "partial_object_metadata_list",
]

META_GROUP = "meta.k8s.io"
_VERSIONS = ("v1", "v1beta1")
_PARTIAL = "PartialObjectMetadata"
_PARTIAL_LIST = "PartialObjectMetadataList"
_KINDS = ("Table", _PARTIAL, _PARTIAL_LIST)
_LIST_META = ("selfLink", "resourceVersion", "continue")
"""What a metadata list keeps of the list's metadata (not ``remainingItemCount``)."""
_SERVED = (
    ("application", "json"),
    ("application", "yaml"),
    ("application", "vnd.kubernetes.protobuf"),
)
_STREAMS = ("json", "vnd.kubernetes.protobuf")
_NOT_ACCEPTABLE = "only the following media types are accepted: " + ", ".join(
    f"{t}/{s}" for t, s in _SERVED
)


@dataclass(frozen=True, slots=True)
class Conversion:
    """A conversion ``Accept`` asked for: ``kind`` (``Table``, ``PartialObjectMetadata`` or
    ``PartialObjectMetadataList``) in ``meta.k8s.io/<version>``."""

    kind: str
    version: str

    @property
    def api_version(self) -> str:
        return f"{META_GROUP}/{self.version}"

    @property
    def table(self) -> bool:
        return self.kind == "Table"

    @property
    def partial(self) -> bool:
        """One ``PartialObjectMetadata`` (a get, or each event of a watch)."""
        return self.kind == _PARTIAL

    @property
    def partial_list(self) -> bool:
        return self.kind == _PARTIAL_LIST


def _ranges(accept: str) -> list[tuple[str, str, dict[str, str]]]:
    """The media ranges of ``Accept`` with their parameters, most preferred first (quality,
    then specificity, then as written); ranges of quality 0 are dropped."""
    ranked: list[tuple[float, int, int, tuple[str, str, dict[str, str]]]] = []
    for position, clause in enumerate(accept.split(",")):
        media, *rest = (part.strip() for part in clause.split(";"))
        params: dict[str, str] = {}
        quality = 1.0
        for param in rest:
            name, _, value = param.partition("=")
            name, value = name.strip(), value.strip()
            if name == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
            elif name:
                params[name] = value
        kind, _, subtype = media.partition("/")
        specific = (kind != "*") + (subtype != "*")
        ranked.append((-quality, -specific, position, (kind, subtype or "*", params)))
    return [r for quality, _s, _p, r in sorted(ranked, key=lambda x: x[:3]) if quality < 0]


def _acceptable(subtype: str, params: Mapping[str, str]) -> tuple[bool, Conversion | None]:
    """Whether a range matching the served ``application/<subtype>`` is acceptable, and the
    conversion it asks for (kube's ``acceptMediaTypeOptions``)."""
    stream = params.get("stream")
    if stream and (subtype not in _STREAMS or stream != "watch"):
        return False, None
    if params.get("sv") not in (None, "", "v1"):
        return False, None
    if not ({"as", "g", "v"} & params.keys()):
        return True, None
    kind, group, version = params.get("as", ""), params.get("g", ""), params.get("v", "")
    if group != META_GROUP or version not in _VERSIONS or kind not in _KINDS:
        return False, None
    if kind == "Table" and subtype not in ("json", "yaml"):
        return False, None
    return True, Conversion(kind, version)


def negotiate(accept: str) -> Conversion | None:
    """The conversion ``Accept`` asks a resource response for (None: the object as stored).

    Raises:
        StatusError: 406 NotAcceptable when no media range of ``Accept`` is one the server
            serves with a conversion it offers.
    """
    if not accept:
        return None
    for kind, subtype, params in _ranges(accept):
        for served_type, served_subtype in _SERVED:
            if kind not in (served_type, "*") or subtype not in (served_subtype, "*"):
                continue
            if kind == "*" and subtype != "*":
                continue
            ok, conversion = _acceptable(served_subtype, params)
            if ok:
                return conversion
    raise StatusError(406, "NotAcceptable", _NOT_ACCEPTABLE)


def go_type(res: Resource, *, as_list: bool) -> str:
    """The Go type kube-apiserver names in its conversion errors (its internal version)."""
    if res.crd is not None:
        return "*unstructured.UnstructuredList" if as_list else "*unstructured.Unstructured"
    package = "core" if res.group in ("", "events.k8s.io") else res.group.split(".")[0]
    return f"*{package}.{res.kind}{'List' if as_list else ''}"


def partial_object_metadata(
    res: Resource, obj: Mapping[str, Any], conversion: Conversion
) -> dict[str, Any]:
    """One object as ``PartialObjectMetadata`` (its metadata whole).

    Raises:
        StatusError: 406 when the conversion asks for a list.
    """
    if not conversion.partial:
        message = (
            f"you requested {conversion.kind}, but the requested object is not a list "
            f"({go_type(res, as_list=False)})"
        )
        raise StatusError(406, "NotAcceptable", message)
    return {"kind": _PARTIAL, "apiVersion": conversion.api_version, "metadata": obj["metadata"]}


def partial_object_metadata_list(
    res: Resource, listed: Mapping[str, Any], conversion: Conversion
) -> dict[str, Any]:
    """A list as ``PartialObjectMetadataList`` (the list's metadata, each item's whole).

    Raises:
        StatusError: 406 when the conversion asks for one object.
    """
    if not conversion.partial_list:
        message = (
            f"you requested {conversion.kind}, but the requested object is a list "
            f"({go_type(res, as_list=True)})"
        )
        raise StatusError(406, "NotAcceptable", message)
    api_version = conversion.api_version
    items = [
        {"kind": _PARTIAL, "apiVersion": api_version, "metadata": item["metadata"]}
        for item in listed.get("items") or ()
    ]
    listed_meta = listed.get("metadata") or {}
    meta = {k: listed_meta[k] for k in _LIST_META if listed_meta.get(k)}
    # Go's nil slice: an empty list's items are null
    return {
        "kind": _PARTIAL_LIST,
        "apiVersion": api_version,
        "metadata": meta,
        "items": items or None,
    }
