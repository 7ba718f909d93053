"""Where a request goes: the Kubernetes URL scheme, from path segments to a resource target.

``/api/v1/...`` is the core group, ``/apis/<group>/<version>/...`` the others; after the group
version come ``[namespaces/<ns>/]<plural>[/<name>[/<subresource>]]``, or the legacy
``watch/...`` form of the same.

What kube-apiserver answers for a path it does not serve depends on who would have served it:
under ``/api`` and a built-in group's ``/apis/<group>`` the API's own router answers a 404
Status (and 405 for a served path without the method); anything else (an unknown group, a
custom resource group's unknown version or resource, ``/foo``) falls through to Go's plain text
``404 page not found``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._registry import Registry, Resource
from ._status import StatusError
from ._subresources import describe, methods_for

__all__ = ["ApiPath", "PageNotFound", "Target", "allowed_methods", "not_found", "resolve"]

_COLLECTION_METHODS = {"list": "GET", "create": "POST", "deletecollection": "DELETE"}


class PageNotFound(Exception):
    """A path no API serves: Go's plain text ``404 page not found``."""


def not_found() -> StatusError:
    """kube-apiserver's 404 Status for a path under an API it serves."""
    return StatusError.path_not_found()


@dataclass(frozen=True, slots=True)
class ApiPath:
    """A path under ``/api`` or ``/apis``: its group version ("" where the path stops short)
    and the segments after it."""

    core: bool
    group: str
    version: str
    rest: tuple[str, ...]

    @classmethod
    def parse(cls, parts: list[str]) -> ApiPath:
        """``parts`` are the path's segments; the first is ``api`` or ``apis``."""
        if parts[0] == "api":
            return cls(True, "", _at(parts, 1), tuple(parts[2:]))
        return cls(False, _at(parts, 1), _at(parts, 2), tuple(parts[3:]))


@dataclass(frozen=True, slots=True)
class Target:
    """The resource a request names: collection (``name`` None), object, or subresource.

    ``ns`` is None for a namespaced collection across all namespaces and ``""`` for
    cluster-scoped resources.
    """

    res: Resource
    ns: str | None
    name: str | None
    subresource: str
    legacy_watch: bool = False


def resolve(registry: Registry, path: ApiPath) -> Target:
    """The target of a resource path (one with segments after the group version).

    Raises:
        StatusError: 404 for an unknown resource or subresource, or a malformed path, under
            ``/api`` or a built-in group.
        PageNotFound: the same under any other group.
    """
    try:
        return _resolve(registry, path)
    except _Served as served:
        raise served.error from None
    except StatusError:
        if path.core or registry.is_builtin_group(path.group):
            raise
        raise PageNotFound() from None


class _Served(Exception):
    """An answer from whoever serves the path (it is not passed on as an unserved path)."""

    def __init__(self, error: StatusError) -> None:
        super().__init__(error.message)
        self.error = error


def allowed_methods(target: Target) -> frozenset[str]:
    """The HTTP methods kube-apiserver routes for the target's path (empty: it serves no such
    path, 404; a method not in the set is 405)."""
    res = target.res
    if target.legacy_watch:
        served = not target.subresource and "watch" in res.verbs
        return frozenset({"GET"}) if served else frozenset()
    if target.subresource:
        return methods_for(describe(res, target.subresource).verbs)
    if target.name is not None:
        return methods_for(tuple(v for v in res.verbs if v != "create"))
    if res.namespaced and target.ns is None:  # across namespaces: list (and watch) only
        return frozenset({"GET"}) if "list" in res.verbs else frozenset()
    return frozenset(m for v, m in _COLLECTION_METHODS.items() if v in res.verbs)


def _resolve(registry: Registry, path: ApiPath) -> Target:
    rest = path.rest
    legacy_watch = rest[0] == "watch"
    if legacy_watch:
        rest = rest[1:]
    if not rest:
        raise not_found()
    ns: str | None = None
    if rest[0] == "namespaces" and len(rest) >= 3:
        candidate = registry.lookup(path.group, path.version, rest[2])
        if candidate is not None and candidate.namespaced:
            ns, rest = rest[1], rest[2:]
    res = registry.lookup(path.group, path.version, rest[0])
    if res is None:
        raise not_found()
    name = rest[1] if len(rest) > 1 else None
    sub = rest[2] if len(rest) > 2 else ""
    if len(rest) > 3 or (res.namespaced and name is not None and ns is None):
        raise not_found()
    if sub and sub not in res.subresources:
        if res.crd is not None:  # the CRD handler's own answer: the object is "not found"
            raise _Served(StatusError.not_found(res.group, res.plural, name or ""))
        raise not_found()
    if not res.namespaced:
        ns = ""
    return Target(res, ns, name, sub, legacy_watch)


def _at(parts: list[str], i: int) -> str:
    return parts[i] if len(parts) > i else ""
