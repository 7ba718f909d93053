"""What each subresource speaks and allows: its kind and its verbs, as kube-apiserver lists them.

Discovery shows them (``pods/exec`` is a ``PodExecOptions`` with ``create`` and ``get``;
``serviceaccounts/token`` an ``authentication.k8s.io/v1`` ``TokenRequest``, create only) and
routing answers 405 for a method whose verb a subresource lacks (GET ``pods/NAME/binding``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ._registry import Resource

__all__ = ["SubresourceInfo", "describe", "methods_for"]

_READ_WRITE = ("get", "patch", "update")
_CONNECT = ("create", "get")
_PROXY = ("create", "delete", "get", "patch", "update")

_METHODS = {"get": "GET", "create": "POST", "update": "PUT", "patch": "PATCH", "delete": "DELETE"}


@dataclass(frozen=True, slots=True)
class SubresourceInfo:
    """A subresource's kind (with its group and version when they are not the parent's) and
    verbs."""

    kind: str
    verbs: tuple[str, ...]
    group: str | None = None
    version: str | None = None


# subresource -> (group, version, kind) when it speaks another kind ("" kind: the parent's;
# "{kind}" is replaced by the parent's kind), and its verbs.
_TABLE: dict[str, tuple[tuple[str, str, str] | None, str, tuple[str, ...]]] = {
    "status": (None, "", _READ_WRITE),
    "scale": (("autoscaling", "v1", "Scale"), "", _READ_WRITE),
    "finalize": (None, "", ("update",)),
    "binding": (None, "Binding", ("create",)),
    "eviction": (("policy", "v1", "Eviction"), "", ("create",)),
    "token": (("authentication.k8s.io", "v1", "TokenRequest"), "", ("create",)),
    "log": (None, "", ("get",)),
    "exec": (None, "PodExecOptions", _CONNECT),
    "attach": (None, "PodAttachOptions", _CONNECT),
    "portforward": (None, "PodPortForwardOptions", _CONNECT),
    "proxy": (None, "{kind}ProxyOptions", _PROXY),
}


def describe(res: Resource, name: str) -> SubresourceInfo:
    """Kind and verbs of ``res``'s subresource ``name`` (others: the parent kind, get/patch/
    update, as ``status``)."""
    other, kind, verbs = _TABLE.get(name, (None, "", _READ_WRITE))
    if other is not None:
        group, version, other_kind = other
        return SubresourceInfo(other_kind, verbs, group, version)
    return SubresourceInfo(kind.replace("{kind}", res.kind) or res.kind, verbs)


def methods_for(verbs: tuple[str, ...] | frozenset[str]) -> frozenset[str]:
    """The HTTP methods that reach these verbs on an object or subresource path."""
    return frozenset(_METHODS[v] for v in verbs if v in _METHODS)
