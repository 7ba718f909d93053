"""Which resources the server serves: the built-in kinds plus those CustomResourceDefinitions add.

Routing, discovery and storage all read :class:`Resource`. Built-ins come from
``kcm.models.builtin_resources()`` when that package is importable; the table below is the
stand-in (and the source of singular names and categories, which ResourceInfo does not carry).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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


# kind, plural, namespaced, subresources, short names, categories
_CORE: dict[str, list[tuple[str, str, bool, tuple[str, ...], tuple[str, ...], tuple[str, ...]]]] = {
    "v1": [
        ("ConfigMap", "configmaps", True, (), ("cm",), ()),
        ("Endpoints", "endpoints", True, (), ("ep",), ()),
        ("Event", "events", True, (), ("ev",), ()),
        ("LimitRange", "limitranges", True, (), ("limits",), ()),
        ("Namespace", "namespaces", False, ("status", "finalize"), ("ns",), ()),
        ("Node", "nodes", False, ("status",), ("no",), ()),
        ("PersistentVolumeClaim", "persistentvolumeclaims", True, ("status",), ("pvc",), ()),
        ("PersistentVolume", "persistentvolumes", False, ("status",), ("pv",), ()),
        (
            "Pod",
            "pods",
            True,
            ("status", "binding", "eviction", "ephemeralcontainers"),
            ("po",),
            ("all",),
        ),
        ("PodTemplate", "podtemplates", True, (), (), ()),
        (
            "ReplicationController",
            "replicationcontrollers",
            True,
            ("status", "scale"),
            ("rc",),
            ("all",),
        ),
        ("ResourceQuota", "resourcequotas", True, ("status",), ("quota",), ()),
        ("Secret", "secrets", True, (), (), ()),
        ("ServiceAccount", "serviceaccounts", True, (), ("sa",), ()),
        ("Service", "services", True, ("status",), ("svc",), ("all",)),
    ],
}
_GROUPS: dict[
    str, list[tuple[str, str, bool, tuple[str, ...], tuple[str, ...], tuple[str, ...]]]
] = {
    "apps/v1": [
        ("ControllerRevision", "controllerrevisions", True, (), (), ()),
        ("DaemonSet", "daemonsets", True, ("status",), ("ds",), ("all",)),
        ("Deployment", "deployments", True, ("status", "scale"), ("deploy",), ("all",)),
        ("ReplicaSet", "replicasets", True, ("status", "scale"), ("rs",), ("all",)),
        ("StatefulSet", "statefulsets", True, ("status", "scale"), ("sts",), ("all",)),
    ],
    "batch/v1": [
        ("CronJob", "cronjobs", True, ("status",), ("cj",), ("all",)),
        ("Job", "jobs", True, ("status",), (), ("all",)),
    ],
    "coordination.k8s.io/v1": [("Lease", "leases", True, (), (), ())],
    "discovery.k8s.io/v1": [("EndpointSlice", "endpointslices", True, (), (), ())],
    "policy/v1": [
        ("PodDisruptionBudget", "poddisruptionbudgets", True, ("status",), ("pdb",), ()),
    ],
    "autoscaling/v2": [
        (
            "HorizontalPodAutoscaler",
            "horizontalpodautoscalers",
            True,
            ("status",),
            ("hpa",),
            ("all",),
        ),
    ],
    "events.k8s.io/v1": [("Event", "events", True, (), ("ev",), ())],
    "rbac.authorization.k8s.io/v1": [
        ("ClusterRoleBinding", "clusterrolebindings", False, (), (), ()),
        ("ClusterRole", "clusterroles", False, (), (), ()),
        ("RoleBinding", "rolebindings", True, (), (), ()),
        ("Role", "roles", True, (), (), ()),
    ],
    "apiextensions.k8s.io/v1": [
        (
            "CustomResourceDefinition",
            "customresourcedefinitions",
            False,
            ("status",),
            ("crd", "crds"),
            ("api-extensions",),
        ),
    ],
}


def _table() -> list[Resource]:
    out: list[Resource] = []
    for gv, rows in {**_CORE, **_GROUPS}.items():
        group, _, version = gv.rpartition("/")
        for kind, plural, namespaced, subs, shorts, cats in rows:
            out.append(
                Resource(
                    group=group,
                    version=version,
                    kind=kind,
                    plural=plural,
                    namespaced=namespaced,
                    list_kind=f"{kind}List",
                    subresources=subs,
                    short_names=shorts,
                    singular=kind.lower(),
                    categories=cats,
                )
            )
    return out


def _from_models() -> list[Resource]:
    """The built-ins the models package declares, merged with the table's extra facts."""
    table = {(r.group, r.version, r.plural): r for r in _table()}
    try:
        from kcm.models import builtin_resources
    except ImportError:
        return list(table.values())
    merged = dict(table)
    try:
        infos = list(builtin_resources())
    except Exception:  # a half-generated models package must not take the server down
        return list(table.values())
    for info in infos:
        key = (info.group, info.version, info.plural)
        known = table.get(key)
        if "/" in info.plural:
            continue
        merged[key] = Resource(
            group=info.group,
            version=info.version,
            kind=info.kind,
            plural=info.plural,
            namespaced=bool(info.namespaced),
            list_kind=info.list_kind or f"{info.kind}List",
            subresources=tuple(info.subresources or (known.subresources if known else ())),
            short_names=tuple(info.short_names or (known.short_names if known else ())),
            verbs=tuple(info.verbs or _ALL_VERBS),
            singular=info.kind.lower(),
            categories=known.categories if known else (),
        )
    return list(merged.values())


class Registry:
    """Lookup of resources by (group, version, plural) and by (group, kind)."""

    def __init__(self) -> None:
        self._builtin = _from_models()
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

    def is_custom(self, group: str, plural: str) -> bool:
        return any(
            r.group == group and r.plural == plural for vs in self._custom.values() for r in vs
        )

    # -- custom resources ------------------------------------------------------------------

    def set_crd(self, crd: dict[str, Any]) -> None:
        """Serve (or stop serving, when it is being deleted) what ``crd`` declares."""
        name = crd.get("metadata", {}).get("name", "")
        spec = crd.get("spec") or {}
        names = spec.get("names") or {}
        versions = spec.get("versions") or []
        served: list[Resource] = []
        # the storage version first, so it is the preferred version
        ordered = sorted(versions, key=lambda v: not v.get("storage", False))
        for v in ordered:
            if not v.get("served", True):
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
                )
            )
        self._custom[name] = served
        self._rebuild()

    def drop_crd(self, name: str) -> None:
        self._custom.pop(name, None)
        self._rebuild()
