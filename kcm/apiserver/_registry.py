"""Which resources the server serves: the built-in kinds plus those CustomResourceDefinitions add.

Routing, discovery and storage all read :class:`Resource`. Built-ins come from
``kcm.models.builtin_resources()``; custom resources from each CRD's served versions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kcm.models import ResourceInfo, builtin_resources

__all__ = ["Registry", "Resource"]

_ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True, slots=True)
class Resource:
    """One servable resource (a group/version/plural), as discovery describes it."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    list_kind: str = ""
    subresources: tuple[str, ...] = ()
    short_names: tuple[str, ...] = ()
    verbs: tuple[str, ...] = _ALL_VERBS
    singular: str = ""
    categories: tuple[str, ...] = ()
    crd: dict[str, Any] | None = field(default=None, compare=False, hash=False)
    """For custom resources: the CRD version entry (schema, subresources, columns)."""
    terminating: bool = False
    """For custom resources: their CRD is being deleted (no new objects)."""
    storage: dict[str, Any] | None = field(default=None, compare=False, hash=False)
    """For custom resources: the CRD's storage version entry (objects are read through its
    schema before the served version's)."""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def storage_key(self) -> tuple[str, str]:
        """Objects of every version of one group/plural share one storage bucket."""
        return (self.group, self.plural)

    @property
    def qualified(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def has_status(self) -> bool:
        return "status" in self.subresources

    @property
    def has_scale(self) -> bool:
        return "scale" in self.subresources


# Group versions served first, in this order: each group's preferred version comes first
# (autoscaling/v2 over v1, as kube-apiserver prefers), and this is the group order of /apis.
# The other built-ins follow in the models' order.
_SERVED_FIRST: tuple[str, ...] = (
    "v1",
    "apps/v1",
    "batch/v1",
    "coordination.k8s.io/v1",
    "discovery.k8s.io/v1",
    "policy/v1",
    "autoscaling/v2",
    "events.k8s.io/v1",
    "rbac.authorization.k8s.io/v1",
    "apiextensions.k8s.io/v1",
)

# Discovery categories kube-apiserver gives that the models do not carry.
_CATEGORIES: dict[tuple[str, str, str], tuple[str, ...]] = {
    ("apiextensions.k8s.io", "v1", "customresourcedefinitions"): ("api-extensions",),
}


# Verbs kube-apiserver serves that the models (generated from the OpenAPI paths) get wrong:
# componentstatuses can be read and listed, not watched (a watch is 405).
_VERBS: dict[tuple[str, str, str], tuple[str, ...]] = {
    ("", "v1", "componentstatuses"): ("get", "list"),
}


def _resource(info: ResourceInfo) -> Resource:
    key = (info.group, info.version, info.plural)
    return Resource(
        group=info.group,
        version=info.version,
        kind=info.kind,
        plural=info.plural,
        namespaced=bool(info.namespaced),
        list_kind=info.list_kind or f"{info.kind}List",
        subresources=tuple(info.subresources),
        short_names=tuple(info.short_names),
        verbs=_VERBS.get(key, tuple(info.verbs or _ALL_VERBS)),
        singular=info.kind.lower(),
        categories=_CATEGORIES.get(key, tuple(info.categories)),
    )


# metrics.k8s.io, as metrics-server's APIService adds it (read-only, served by ``_metrics``).
_METRICS: tuple[Resource, ...] = tuple(
    Resource(
        group="metrics.k8s.io",
        version="v1beta1",
        kind=kind,
        plural=plural,
        namespaced=namespaced,
        list_kind=f"{kind}List",
        verbs=("get", "list"),
        singular=kind.lower(),
    )
    for kind, plural, namespaced in (("NodeMetrics", "nodes", False), ("PodMetrics", "pods", True))
)


def _builtins() -> list[Resource]:
    """The built-ins ``kcm.models`` declares, the group versions of :data:`_SERVED_FIRST` first,
    then metrics.k8s.io."""
    every = [_resource(info) for info in builtin_resources() if "/" not in info.plural]
    rank = {gv: i for i, gv in enumerate(_SERVED_FIRST)}
    return [*sorted(every, key=lambda r: rank.get(r.api_version, len(rank))), *_METRICS]


class Registry:
    """Lookup of resources by (group, version, plural) and by (group, kind)."""

    def __init__(self) -> None:
        self._builtin = _builtins()
        self._builtin_groups = frozenset(r.group for r in self._builtin)
        self._custom: dict[str, list[Resource]] = {}  # CRD name -> its served versions
        self._rebuild()

    def _rebuild(self) -> None:
        every = list(self._builtin)
        for versions in self._custom.values():
            every.extend(versions)
        self.all: list[Resource] = every
        self._by_path = {(r.group, r.version, r.plural): r for r in every}
        self._by_kind: dict[tuple[str, str], Resource] = {}
        for r in every:
            self._by_kind.setdefault((r.group, r.kind), r)
        self._group_versions: dict[str, list[str]] = {}
        for r in every:
            served = self._group_versions.setdefault(r.group, [])
            if r.version not in served:
                served.append(r.version)

    def lookup(self, group: str, version: str, plural: str) -> Resource | None:
        return self._by_path.get((group, version, plural))

    def by_kind(self, group: str, kind: str) -> Resource | None:
        return self._by_kind.get((group, kind))

    def by_storage(self, group: str, plural: str) -> Resource | None:
        for r in self.all:
            if r.group == group and r.plural == plural:
                return r
        return None

    def groups(self) -> dict[str, list[str]]:
        """group -> served versions (preferred first); the core group is ``""``."""
        return self._group_versions

    def resources_in(self, group: str, version: str) -> list[Resource]:
        return [r for r in self.all if r.group == group and r.version == version]

    def is_builtin_group(self, group: str) -> bool:
        """Whether kube-apiserver itself serves ``group`` (not only CustomResourceDefinitions)."""
        return group in self._builtin_groups

    def is_custom(self, group: str, plural: str) -> bool:
        return any(
            r.group == group and r.plural == plural for vs in self._custom.values() for r in vs
        )

    # -- custom resources ------------------------------------------------------------------

    def set_crd(self, crd: dict[str, Any]) -> None:
        """Serve what ``crd`` declares, once its names are accepted or it is established
        (kube-apiserver's crdHandler); a CRD without either is not served."""
        name = crd.get("metadata", {}).get("name", "")
        spec = crd.get("spec") or {}
        names = spec.get("names") or {}
        versions = spec.get("versions") or []
        served: list[Resource] = []
        conditions = {
            c.get("type"): c.get("status")
            for c in (crd.get("status") or {}).get("conditions") or ()
            if isinstance(c, dict)
        }
        if "True" not in (conditions.get("NamesAccepted"), conditions.get("Established")):
            versions = []
        # the storage version first, so it is the preferred version
        ordered = sorted(versions, key=lambda v: not v.get("storage", False))
        storage = ordered[0] if ordered and ordered[0].get("storage") else None
        for v in ordered:
            if not v.get("served"):
                continue
            subs = v.get("subresources") or {}
            served.append(
                Resource(
                    group=spec.get("group", ""),
                    version=v.get("name", "v1"),
                    kind=names.get("kind", ""),
                    plural=names.get("plural", ""),
                    namespaced=spec.get("scope", "Namespaced") == "Namespaced",
                    list_kind=names.get("listKind") or f"{names.get('kind', '')}List",
                    subresources=tuple(k for k in ("status", "scale") if k in subs),
                    short_names=tuple(names.get("shortNames") or ()),
                    singular=names.get("singular") or names.get("kind", "").lower(),
                    categories=tuple(names.get("categories") or ()),
                    crd=v,
                    terminating=conditions.get("Terminating") == "True",
                    storage=storage,
                )
            )
        self._custom[name] = served
        self._rebuild()

    def drop_crd(self, name: str) -> None:
        self._custom.pop(name, None)
        self._rebuild()
