"""What one object of a kind uses of a quota, per kind (kube's quota evaluators).

Pods, Services and PersistentVolumeClaims have their own rules; every other kind only counts
(``count/<resource>.<group>``, and the legacy names ``configmaps``, ``secrets``,
``replicationcontrollers`` and ``resourcequotas``). Objects are the JSON-shaped dicts the API
server stores and the client receives. Only pods know scopes: a quota with a scope matches no
object of another kind.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final

from kcm.models import parse_time
from kcm.models.core_v1 import Pod
from kcm.selectors import Requirement

from ._quantity import Quantity
from ._resource_list import ResourceList, add, max_of, resource_list

__all__ = [
    "IGNORED_RESOURCES",
    "Evaluator",
    "PersistentVolumeClaimEvaluator",
    "PodEvaluator",
    "ServiceEvaluator",
    "count_name",
    "counts_against_quota",
    "counts_for_quota",
    "evaluator_for",
    "evaluators_for_quota",
    "is_best_effort",
    "object_count_evaluator",
    "quota_service_type",
    "scope_requirements",
]

Obj = Mapping[str, Any]

IGNORED_RESOURCES: Final = frozenset(
    {
        ("", "bindings"),
        ("", "componentstatuses"),
        ("authentication.k8s.io", "tokenreviews"),
        ("authorization.k8s.io", "subjectaccessreviews"),
        ("authorization.k8s.io", "selfsubjectaccessreviews"),
        ("authorization.k8s.io", "localsubjectaccessreviews"),
        ("authorization.k8s.io", "selfsubjectrulesreviews"),
        ("", "events"),
    }
)
"""(group, resource) pairs quota never counts: virtual resources, and events (kube's
``DefaultIgnoredResources``)."""

_ONE = Quantity.count(1)
_ZERO = Quantity.count(0)


def count_name(group: str, resource: str) -> str:
    """``count/pods``, ``count/deployments.apps``: the object-count name of a resource."""
    return f"count/{resource}.{group}" if group else f"count/{resource}"


def counts_for_quota(names: Iterable[str]) -> list[tuple[str, str]]:
    """The (group, resource) pairs that ``count/...`` names in a quota's hard limits count."""
    found: list[tuple[str, str]] = []
    for name in names:
        if name.startswith("count/"):
            resource, _, group = name[len("count/") :].partition(".")
            if resource and (group, resource) not in IGNORED_RESOURCES:
                found.append((group, resource))
    return found


@dataclass(frozen=True)
class Evaluator:
    """The usage rules of one kind; this base class only counts objects.

    Attributes:
        group, resource: the kind's group and plural.
        names: the resource names it fills (``count/<resource>.<group>`` and an alias).
        operations: the admission operations it charges (``CREATE``, ``UPDATE``).
    """

    group: str
    resource: str
    names: tuple[str, ...] = ()
    operations: frozenset[str] = field(default=frozenset({"CREATE"}))

    @property
    def group_resource(self) -> tuple[str, str]:
        return (self.group, self.resource)

    def handles(self, operation: str) -> bool:
        return operation in self.operations

    def matching_resources(self, names: Iterable[str]) -> list[str]:
        """Which of ``names`` this kind's objects use, sorted."""
        return sorted(set(names) & set(self.names))

    def matches_scope(self, requirement: Obj, obj: Obj) -> bool:
        """Whether ``obj`` is in a quota's scope (a ScopedResourceSelectorRequirement)."""
        return False

    def usage(self, obj: Obj, now: datetime) -> ResourceList:
        return dict.fromkeys(self.names, _ONE)

    def constraints(self, required: Iterable[str], obj: Obj) -> str | None:
        """Why ``obj`` cannot be admitted under a quota limiting ``required`` (else None)."""
        return None

    def matches(self, quota: Obj, obj: Obj) -> bool:
        """Whether ``quota`` (by its status.hard and its scopes) applies to ``obj``."""
        hard = ((quota.get("status") or {}).get("hard")) or {}
        if not self.matching_resources(hard):
            return False
        return all(self.matches_scope(s, obj) for s in scope_requirements(quota.get("spec")))

    def usage_of_all(
        self,
        items: Iterable[Obj],
        names: Iterable[str],
        spec: Obj | None,
        now: datetime,
    ) -> ResourceList:
        """Usage of the objects in a quota's scopes, for ``names`` (each starts at zero)."""
        used: ResourceList = dict.fromkeys(names, _ZERO)
        scopes = scope_requirements(spec)
        for item in items:
            if all(self.matches_scope(s, item) for s in scopes):
                used = add(used, self.usage(item, now))
        return used


def object_count_evaluator(group: str, resource: str, alias: str = "") -> Evaluator:
    """An evaluator that only counts objects of a kind (with a legacy alias name)."""
    names = (count_name(group, resource), alias) if alias else (count_name(group, resource),)
    return Evaluator(group, resource, names)


def scope_requirements(spec: Obj | None) -> list[Obj]:
    """A quota's ``spec.scopes`` (as ``Exists``) followed by its ``scopeSelector``."""
    spec = spec or {}
    found: list[Obj] = [{"scopeName": s, "operator": "Exists"} for s in spec.get("scopes") or ()]
    found.extend(((spec.get("scopeSelector") or {}).get("matchExpressions")) or ())
    return found


# -- pods -------------------------------------------------------------------------------------

_POD_NAMES: Final = frozenset(
    {
        "count/pods",
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
    }
)
_CONSTRAINED: Final = frozenset(
    {"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"}
)
_QOS_RESOURCES: Final = ("cpu", "memory")


def _is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def _is_extended(name: str) -> bool:
    return not _is_native(name) and not name.startswith("requests.")


def _containers(pod: Obj, key: str) -> list[Obj]:
    return list(((pod.get("spec") or {}).get(key)) or ())


def _resources(container: Obj, key: str) -> ResourceList:
    return resource_list((container.get("resources") or {}).get(key))


def _compute_usage(requests: ResourceList, limits: ResourceList) -> ResourceList:
    """kube's ``podComputeUsageHelper``: the quota names a set of requests and limits fill."""
    out: ResourceList = {"pods": _ONE}
    for name in ("cpu", "memory", "ephemeral-storage"):
        if name in requests:
            out[name] = requests[name]
            out[f"requests.{name}"] = requests[name]
        if name in limits:
            out[f"limits.{name}"] = limits[name]
    for name, value in requests.items():
        if name.startswith("hugepages-"):
            out[name] = value
            out[f"requests.{name}"] = value
        if _is_extended(name):
            out[f"requests.{name}"] = value
    return out


def is_best_effort(pod: Obj) -> bool:
    """No container (init containers included) requests or limits CPU or memory above zero."""
    for container in _containers(pod, "containers") + _containers(pod, "initContainers"):
        for key in ("requests", "limits"):
            found = _resources(container, key)
            if any(found[n].value > 0 for n in _QOS_RESOURCES if n in found):
                return False
    return True


def _is_terminating(pod: Obj) -> bool:
    deadline = (pod.get("spec") or {}).get("activeDeadlineSeconds")
    return deadline is not None and int(deadline) >= 0


def _cross_namespace(terms: Iterable[Obj], weighted: bool = False) -> bool:
    for term in terms:
        inner = term.get("podAffinityTerm") or {} if weighted else term
        if inner.get("namespaces") or inner.get("namespaceSelector") is not None:
            return True
    return False


def _uses_cross_namespace_affinity(pod: Obj) -> bool:
    affinity = (pod.get("spec") or {}).get("affinity") or {}
    for key in ("podAffinity", "podAntiAffinity"):
        part = affinity.get(key) or {}
        if _cross_namespace(part.get("requiredDuringSchedulingIgnoredDuringExecution") or ()):
            return True
        preferred = part.get("preferredDuringSchedulingIgnoredDuringExecution") or ()
        if _cross_namespace(preferred, weighted=True):
            return True
    return False


def _priority_class_matches(pod: Obj, requirement: Obj) -> bool:
    name = (pod.get("spec") or {}).get("priorityClassName") or ""
    labels = {"PriorityClass": name} if name else {}
    try:
        selector = Requirement(
            "PriorityClass", requirement.get("operator") or "", requirement.get("values") or ()
        )
    except ValueError:
        return False
    return selector.matches(labels)


def counts_against_quota(pod: Obj | Pod, now: datetime) -> bool:
    """kube's ``QuotaV1Pod``: not Succeeded or Failed, and not past its deletion grace.

    ``pod`` is a wire dict or a typed :class:`~kcm.models.core_v1.Pod` (the quota monitor's
    informer objects: checked as they are, without converting two pods per update).
    """
    if isinstance(pod, Mapping):
        phase = (pod.get("status") or {}).get("phase")
        meta = pod.get("metadata") or {}
        deleted, grace = meta.get("deletionTimestamp"), meta.get("deletionGracePeriodSeconds")
        deleted_at = parse_time(deleted) if deleted else None
    else:
        phase = pod.status.phase if pod.status is not None else None
        deleted_at = pod.metadata.deletion_timestamp
        grace = pod.metadata.deletion_grace_period_seconds
    if phase in ("Succeeded", "Failed"):
        return False
    if deleted_at is not None and grace is not None:
        return not now > deleted_at + timedelta(seconds=int(grace))
    return True


@dataclass(frozen=True)
class PodEvaluator(Evaluator):
    """Pods: counts, compute requests and limits, and every scope."""

    group: str = ""
    resource: str = "pods"

    def matching_resources(self, names: Iterable[str]) -> list[str]:
        found = set()
        for name in names:
            prefixed = name.startswith(("hugepages-", "requests.hugepages-"))
            extended = not _is_native(name) and name.startswith("requests.")
            if name in _POD_NAMES or prefixed or extended:
                found.add(name)
        return sorted(found)

    def matches_scope(self, requirement: Obj, obj: Obj) -> bool:
        scope = requirement.get("scopeName")
        if scope == "Terminating":
            return _is_terminating(obj)
        if scope == "NotTerminating":
            return not _is_terminating(obj)
        if scope == "BestEffort":
            return is_best_effort(obj)
        if scope == "NotBestEffort":
            return not is_best_effort(obj)
        if scope == "PriorityClass":
            return _priority_class_matches(obj, requirement)
        if scope == "CrossNamespacePodAffinity":
            return _uses_cross_namespace_affinity(obj)
        return False

    def usage(self, obj: Obj, now: datetime) -> ResourceList:
        out: ResourceList = {"count/pods": _ONE}
        if not counts_against_quota(obj, now):
            return out
        requests: ResourceList = {}
        limits: ResourceList = {}
        for container in _containers(obj, "containers"):
            requests = add(requests, _resources(container, "requests"))
            limits = add(limits, _resources(container, "limits"))
        for container in _containers(obj, "initContainers"):
            requests = max_of(requests, _resources(container, "requests"))
            limits = max_of(limits, _resources(container, "limits"))
        overhead = resource_list((obj.get("spec") or {}).get("overhead"))
        requests, limits = add(requests, overhead), add(limits, overhead)
        return add(out, _compute_usage(requests, limits))

    def constraints(self, required: Iterable[str], obj: Obj) -> str | None:
        wanted = set(required) & _CONSTRAINED
        missing: set[str] = set()
        for container in _containers(obj, "containers") + _containers(obj, "initContainers"):
            used = _compute_usage(
                _resources(container, "requests"), _resources(container, "limits")
            )
            missing |= wanted - used.keys()
        return f"must specify {','.join(sorted(missing))}" if missing else None


# -- services ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServiceEvaluator(Evaluator):
    """Services: counts, node ports and load balancers (charged on update too)."""

    group: str = ""
    resource: str = "services"
    names: tuple[str, ...] = (
        "count/services",
        "services",
        "services.nodeports",
        "services.loadbalancers",
    )
    operations: frozenset[str] = frozenset({"CREATE", "UPDATE"})

    def usage(self, obj: Obj, now: datetime) -> ResourceList:
        spec = obj.get("spec") or {}
        ports = list(spec.get("ports") or ())
        out: ResourceList = {
            "count/services": _ONE,
            "services": _ONE,
            "services.loadbalancers": _ZERO,
            "services.nodeports": _ZERO,
        }
        kind = spec.get("type")
        if kind == "NodePort":
            out["services.nodeports"] = Quantity.count(len(ports))
        elif kind == "LoadBalancer":
            if spec.get("allocateLoadBalancerNodePorts") is False:
                with_node_port = [p for p in ports if p.get("nodePort")]
                out["services.nodeports"] = Quantity.count(len(with_node_port))
            else:
                out["services.nodeports"] = Quantity.count(len(ports))
            out["services.loadbalancers"] = _ONE
        return out


def quota_service_type(service: Obj) -> str:
    """``NodePort``, ``LoadBalancer`` or empty: a type change that changes usage."""
    kind = (service.get("spec") or {}).get("type")
    return kind if kind in ("NodePort", "LoadBalancer") else ""


# -- persistent volume claims ------------------------------------------------------------------

_STORAGE_CLASS: Final = ".storageclass.storage.k8s.io/"
_CLASS_ANNOTATION: Final = "volume.beta.kubernetes.io/storage-class"
_CLAIM_NAMES: Final = ("count/persistentvolumeclaims", "persistentvolumeclaims", "requests.storage")
_CLAIM_CLASS_SUFFIXES: Final = (
    _STORAGE_CLASS + "persistentvolumeclaims",
    _STORAGE_CLASS + "requests.storage",
)


def _claim_class(pvc: Obj) -> str:
    annotations = (pvc.get("metadata") or {}).get("annotations") or {}
    if _CLASS_ANNOTATION in annotations:
        return str(annotations[_CLASS_ANNOTATION])
    return str((pvc.get("spec") or {}).get("storageClassName") or "")


@dataclass(frozen=True)
class PersistentVolumeClaimEvaluator(Evaluator):
    """Claims: counts and requested storage, overall and per storage class."""

    group: str = ""
    resource: str = "persistentvolumeclaims"
    names: tuple[str, ...] = ("count/persistentvolumeclaims",)
    operations: frozenset[str] = frozenset({"CREATE", "UPDATE"})

    def matching_resources(self, names: Iterable[str]) -> list[str]:
        found = set()
        for name in names:
            if name in _CLAIM_NAMES or name.endswith(_CLAIM_CLASS_SUFFIXES):
                found.add(name)
        return sorted(found)

    def usage(self, obj: Obj, now: datetime) -> ResourceList:
        out: ResourceList = {"persistentvolumeclaims": _ONE, "count/persistentvolumeclaims": _ONE}
        storage_class = _claim_class(obj)
        if storage_class:
            out[storage_class + _STORAGE_CLASS + "persistentvolumeclaims"] = _ONE
        requests = resource_list(
            (((obj.get("spec") or {}).get("resources") or {}).get("requests")) or {}
        )
        if "storage" in requests:
            storage = requests["storage"].round_up()
            out["requests.storage"] = storage
            if storage_class:
                out[storage_class + _STORAGE_CLASS + "requests.storage"] = storage
        return out


# -- the registry ------------------------------------------------------------------------------

_STATIC: Final[dict[tuple[str, str], Evaluator]] = {
    e.group_resource: e
    for e in (
        PodEvaluator(),
        ServiceEvaluator(),
        PersistentVolumeClaimEvaluator(),
        object_count_evaluator("", "configmaps", "configmaps"),
        object_count_evaluator("", "resourcequotas", "resourcequotas"),
        object_count_evaluator("", "replicationcontrollers", "replicationcontrollers"),
        object_count_evaluator("", "secrets", "secrets"),
    )
}


def evaluator_for(group: str, resource: str) -> Evaluator | None:
    """The rules for a kind: its own, else count-only; None for a kind quota ignores."""
    if (group, resource) in IGNORED_RESOURCES:
        return None
    return _STATIC.get((group, resource)) or object_count_evaluator(group, resource)


def evaluators_for_quota(names: Iterable[str]) -> list[Evaluator]:
    """The evaluators that may fill a quota limiting ``names``: the built-in ones, and a
    count-only one per ``count/<resource>.<group>`` of another kind."""
    found = list(_STATIC.values())
    for group, resource in counts_for_quota(names):
        if (group, resource) not in _STATIC:
            found.append(object_count_evaluator(group, resource))
    return found
