"""RBAC decisions over the stored Roles, ClusterRoles and their bindings, as kube-apiserver's
RBAC authorizer makes them (``plugin/pkg/auth/authorizer/rbac``): for access reviews only, as
kcm enforces no authorization on its own requests.

Cluster role bindings are visited first, then the role bindings of the request's namespace;
the first rule that allows decides, and the reason names its binding (``RBAC: allowed by
ClusterRoleBinding "b" of ClusterRole "r" to User "u"``). Nothing allowing is "no opinion",
with the bindings' missing roles as the reason. kube-apiserver's bootstrap policy (the
``system:*`` roles) is not created, so only what was stored grants anything.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ._requester import Requester
from ._store import Obj, Store

__all__ = ["Attributes", "authorize", "rules_for"]

_RBAC = "rbac.authorization.k8s.io"
_RBAC_RESOURCES = tuple(
    (_RBAC, plural) for plural in ("clusterrolebindings", "rolebindings", "clusterroles", "roles")
)
_CACHED_REQUESTERS = 4096

_Visited = tuple[Obj, str, str, Mapping[str, Any], list[Any] | str]


@dataclass(frozen=True, slots=True)
class Attributes:
    """What is asked: a verb on a resource (``resource`` set) or on a non-resource path."""

    verb: str
    namespace: str = ""
    group: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    path: str = ""
    resource_request: bool = False
    """Set for requests kube's RequestInfo reads as resource requests (an access review's
    attributes are told apart by ``path``)."""

    @property
    def is_resource(self) -> bool:
        return self.resource_request or bool(self.resource) or not self.path


def _has(values: Any, wanted: str) -> bool:
    return isinstance(values, list) and ("*" in values or wanted in values)


def _rule_allows(rule: Mapping[str, Any], asked: Attributes) -> bool:
    """kube's ``RuleAllows``."""
    if not _has(rule.get("verbs"), asked.verb):
        return False
    if not asked.is_resource:
        for url in rule.get("nonResourceURLs") or []:
            if url == "*" or url == asked.path:
                return True
            if url.endswith("*") and asked.path.startswith(url[:-1]):
                return True
        return False
    if not _has(rule.get("apiGroups"), asked.group):
        return False
    combined = f"{asked.resource}/{asked.subresource}" if asked.subresource else asked.resource
    resources = rule.get("resources") or []
    if not any(
        r in ("*", combined) or (r.startswith("*/") and asked.subresource == r[2:])
        for r in resources
    ):
        return False
    names = rule.get("resourceNames") or []
    return not names or asked.name in names


def _applies(subject: Mapping[str, Any], who: Requester, namespace: str) -> bool:
    """kube's ``appliesToUser``."""
    kind, name = subject.get("kind"), subject.get("name")
    if kind == "User":
        return who.name == name
    if kind == "Group":
        return name in who.groups
    if kind == "ServiceAccount":
        sa_namespace = subject.get("namespace") or namespace
        return bool(sa_namespace) and who.name == f"system:serviceaccount:{sa_namespace}:{name}"
    return False


def _describe(subject: Mapping[str, Any], binding_namespace: str) -> str:
    """kube's ``describeSubject``."""
    kind, name = subject.get("kind", ""), subject.get("name", "")
    if kind == "ServiceAccount":
        return f'{kind} "{name}/{subject.get("namespace") or binding_namespace}"'
    return f'{kind} "{name}"'


def _objects(store: Store, plural: str, namespace: str | None = None) -> list[Obj]:
    bucket = store.objects.get((_RBAC, plural), {})
    found = [
        obj
        for obj in bucket.values()
        if namespace is None or obj["metadata"].get("namespace") == namespace
    ]
    return sorted(found, key=lambda o: str(o["metadata"].get("name", "")))


def _role_rules(store: Store, ref: Mapping[str, Any], namespace: str) -> list[Any] | str:
    """The rules of a binding's role, or the error kube reports when it is missing."""
    kind, name = ref.get("kind"), str(ref.get("name", ""))
    if kind == "ClusterRole":
        role = store.get((_RBAC, "clusterroles"), "", name)
        missing = f'clusterrole.rbac.authorization.k8s.io "{name}" not found'
    else:
        role = store.get((_RBAC, "roles"), namespace, name)
        missing = f'role.rbac.authorization.k8s.io "{name}" not found'
    return missing if role is None else list(role.get("rules") or [])


def _bindings(store: Store, namespace: str) -> Iterable[tuple[Obj, str, str]]:
    """(binding, kind, namespace) of every binding that may apply, in kube's visiting order."""
    for binding in _objects(store, "clusterrolebindings"):
        yield binding, "ClusterRoleBinding", ""
    if namespace:
        for binding in _objects(store, "rolebindings", namespace):
            yield binding, "RoleBinding", namespace


def _visit(store: Store, who: Requester, namespace: str) -> Iterator[_Visited]:
    """(binding, kind, namespace, subject, the role's rules or the error of a missing role) of
    every binding that applies to ``who`` (kube's ``VisitRulesFor``)."""
    for binding, kind, bound_in in _bindings(store, namespace):
        subject = next(
            (s for s in binding.get("subjects") or [] if _applies(s, who, bound_in)), None
        )
        if subject is None:
            continue
        yield (
            binding,
            kind,
            bound_in,
            subject,
            _role_rules(store, binding.get("roleRef") or {}, bound_in),
        )


@dataclass(slots=True)
class _VisitCache:
    """The bindings that apply, per user, groups and namespace, while no RBAC object changes:
    finding them sorts and scans every binding, and a client sends many requests as one user."""

    version: tuple[int, ...]
    applying: dict[tuple[str, tuple[str, ...], str], tuple[_Visited, ...]] = field(
        default_factory=dict
    )


_visit_caches: weakref.WeakKeyDictionary[Store, _VisitCache] = weakref.WeakKeyDictionary()


def _visit_cached(store: Store, who: Requester, namespace: str) -> tuple[_Visited, ...]:
    """:func:`_visit`, remembered until a Role, ClusterRole or binding is written."""
    version = tuple(store.revisions.get(rkey, 0) for rkey in _RBAC_RESOURCES)
    cache = _visit_caches.get(store)
    if cache is None or cache.version != version:
        cache = _visit_caches[store] = _VisitCache(version)
    key = (who.name, who.groups, namespace)
    found = cache.applying.get(key)
    if found is None:
        if len(cache.applying) >= _CACHED_REQUESTERS:
            cache.applying.clear()
        found = cache.applying[key] = tuple(_visit(store, who, namespace))
    return found


def _aggregate(errors: list[str]) -> str:
    """Go's ``utilerrors.NewAggregate(...).Error()``."""
    return errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]"


def authorize(store: Store, who: Requester, asked: Attributes) -> tuple[bool, str]:
    """Whether ``who`` may do what is ``asked``, and the reason kube-apiserver gives."""
    if who.privileged:
        return True, ""
    errors: list[str] = []
    for binding, kind, namespace, subject, rules in _visit_cached(store, who, asked.namespace):
        if isinstance(rules, str):
            errors.append(rules)
            continue
        if any(_rule_allows(rule, asked) for rule in rules):
            ref = binding.get("roleRef") or {}
            name = binding["metadata"].get("name", "")
            where = f"{name}/{namespace}" if namespace else name
            source = f'{kind} "{where}" of {ref.get("kind", "")} "{ref.get("name", "")}"'
            return True, f"RBAC: allowed by {source} to {_describe(subject, namespace)}"
    if not errors:
        return False, ""
    return False, "RBAC: " + _aggregate(errors)


def rules_for(store: Store, who: Requester, namespace: str) -> tuple[list[Any], str]:
    """Every rule ``who`` has in ``namespace`` (cluster-wide ones too) and the aggregated
    error of the roles that are missing (kube's ``RulesFor``: a SelfSubjectRulesReview)."""
    found: list[Any] = []
    errors: list[str] = []
    for _, _, _, _, rules in _visit_cached(store, who, namespace):
        if isinstance(rules, str):
            errors.append(rules)
        else:
            found.extend(rules)
    return found, _aggregate(errors) if errors else ""
