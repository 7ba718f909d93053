"""Where a request goes: the Kubernetes URL scheme, from path segments to a resource target.

``/api/v1/...`` is the core group, ``/apis/<group>/<version>/...`` the others; after the group
version come ``[namespaces/<ns>/]<plural>[/<name>[/<subresource>]]``, or the legacy
``watch/...`` form of the same.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._registry import Registry, Resource
from ._status import StatusError

__all__ = ["ApiPath", "Target", "not_found", "resolve"]


def not_found() -> StatusError:
    """kube-apiserver's 404 for a path it does not serve."""
    return StatusError(404, "NotFound", "the server could not find the requested resource")


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
        StatusError: 404 for an unknown resource or subresource, or a malformed path.
    """
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
        raise not_found()
    if not res.namespaced:
        ns = ""
    return Target(res, ns, name, sub, legacy_watch)


def _at(parts: list[str], i: int) -> str:
    return parts[i] if len(parts) > i else ""
