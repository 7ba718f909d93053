"""The types managed fields are computed with: what structured-merge-diff knows of an object's
schema when kube-apiserver tracks ownership.

A :class:`FieldType` answers, for the value at one place in an object:

- ``list_shape``: whether a list is atomic (one leaf), a set (``v:`` items) or a map (``k:``
  items, by which keys);
- ``atomic``: whether a map or struct is one leaf (``metadata.ownerReferences[*]``, a label
  selector, ``x-kubernetes-map-type: atomic``);
- ``is_field``: whether a key is a declared struct field (an applied map entry that is not one
  is owned itself, with a ``.`` in FieldsV1);
- ``in_zero_value``: whether a built-in kind's Go zero value already carries the member (a
  non-pointer struct such as ``spec.template``, or a list that is not ``omitempty`` such as
  ``containers``): such a member is never "added" by an update, so it gets no ``.``.

Built-in kinds (:func:`builtin_type`) walk the ``kcm.models`` classes (named as the Go types)
and take list merge keys from the strategic merge table (:mod:`._strategic`), as the OpenAPI
``x-kubernetes-patch-*`` extensions structured-merge-diff reads; custom resources
(:func:`schema_type`) walk their CRD version's schema (``x-kubernetes-list-type``,
``x-kubernetes-list-map-keys``, ``x-kubernetes-map-type``), where a list is atomic unless the
schema says otherwise.
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

import msgspec

from kcm.models import ObjectMeta, model_for

from ._strategic import FieldInfo, field_info, root_type

__all__ = [
    "ATOMIC",
    "MAP",
    "SET",
    "UNTYPED",
    "FieldType",
    "builtin_type",
    "schema_type",
]

ATOMIC, MAP, SET = range(3)
"""List shapes: one leaf, an associative list (``k:`` items), a set (``v:`` items)."""

_ATOMIC_STRUCTS: Final = frozenset(
    {
        "ConfigMapKeySelector",
        "EndpointAddress",
        "EndpointPort",
        "LabelSelector",
        "LocalObjectReference",
        "NodeSelector",
        "NodeSelectorTerm",
        "ObjectFieldSelector",
        "ObjectReference",
        "OwnerReference",
        "ResourceFieldSelector",
        "RoleRef",
        "ScopeSelector",
        "SecretKeySelector",
        "SecretReference",
        "Subject",
        "TopologySelectorTerm",
        "TypedLocalObjectReference",
    }
)
"""Go types marked ``+structType=atomic`` (Kubernetes 1.24)."""

_ATOMIC_MAPS: Final = frozenset(
    {
        ("PodSpec", "nodeSelector"),
        ("ServiceSpec", "selector"),
        ("ReplicationControllerSpec", "selector"),
    }
)
"""Go map fields marked ``+mapType=atomic``."""

_MULTI_KEYS: Final[dict[tuple[str, str], tuple[str, ...]]] = {
    ("Container", "ports"): ("containerPort", "protocol"),
    ("ServiceSpec", "ports"): ("port", "protocol"),
    ("PodSpec", "topologySpreadConstraints"): ("topologyKey", "whenUnsatisfiable"),
}
"""OpenAPI list-map-keys that differ from the strategic merge key (protocol defaults to TCP)."""

_LIST_TYPES: Final[dict[tuple[str, str], tuple[int, tuple[str, ...]]]] = {
    ("JobStatus", "conditions"): (ATOMIC, ()),
    ("UncountedTerminatedPods", "succeeded"): (SET, ()),
    ("UncountedTerminatedPods", "failed"): (SET, ()),
    ("Endpoint", "addresses"): (SET, ()),
    ("CSIDriverSpec", "volumeLifecycleModes"): (SET, ()),
    ("CertificateSigningRequestStatus", "conditions"): (MAP, ("type",)),
    ("ResourcePolicyRule", "verbs"): (SET, ()),
    ("ResourcePolicyRule", "apiGroups"): (SET, ()),
    ("ResourcePolicyRule", "resources"): (SET, ()),
    ("ResourcePolicyRule", "namespaces"): (SET, ()),
    ("NonResourcePolicyRule", "verbs"): (SET, ()),
    ("NonResourcePolicyRule", "nonResourceURLs"): (SET, ()),
    ("FlowSchemaStatus", "conditions"): (MAP, ("type",)),
    ("PriorityLevelConfigurationStatus", "conditions"): (MAP, ("type",)),
    ("CustomResourceDefinitionStatus", "conditions"): (MAP, ("type",)),
}
"""Go list fields whose ``+listType`` says other than their patch strategy (or that have none)."""

_ZERO_VALUE: Final[dict[str, frozenset[str]]] = {
    "CSINodeDriver": frozenset({"topologyKeys"}),
    "CSINodeSpec": frozenset({"drivers"}),
    "CephFSPersistentVolumeSource": frozenset({"monitors"}),
    "CephFSVolumeSource": frozenset({"monitors"}),
    "CertificateSigningRequestCondition": frozenset({"lastTransitionTime", "lastUpdateTime"}),
    "ClusterRole": frozenset({"rules"}),
    "ClusterRoleBinding": frozenset({"roleRef"}),
    "Condition": frozenset({"lastTransitionTime"}),
    "Container": frozenset({"resources"}),
    "ContainerImage": frozenset({"names"}),
    "ContainerResourceMetricSource": frozenset({"target"}),
    "ContainerResourceMetricStatus": frozenset({"current"}),
    "ContainerStateRunning": frozenset({"startedAt"}),
    "ContainerStateTerminated": frozenset({"finishedAt", "startedAt"}),
    "ContainerStatus": frozenset({"lastState", "state"}),
    "ControllerRevision": frozenset({"data"}),
    "CronJobSpec": frozenset({"jobTemplate"}),
    "CustomResourceDefinitionCondition": frozenset({"lastTransitionTime"}),
    "CustomResourceDefinitionSpec": frozenset({"names", "versions"}),
    "CustomResourceDefinitionStatus": frozenset({"acceptedNames", "conditions", "storedVersions"}),
    "DaemonSetCondition": frozenset({"lastTransitionTime"}),
    "DaemonSetSpec": frozenset({"selector", "template", "updateStrategy"}),
    "DeploymentCondition": frozenset({"lastTransitionTime", "lastUpdateTime"}),
    "DeploymentSpec": frozenset({"selector", "strategy", "template"}),
    "Endpoint": frozenset({"addresses", "conditions"}),
    "EndpointSlice": frozenset({"endpoints", "ports"}),
    "EphemeralContainer": frozenset({"resources"}),
    "Event": frozenset(
        {
            "deprecatedFirstTimestamp",
            "deprecatedLastTimestamp",
            "deprecatedSource",
            "eventTime",
            "firstTimestamp",
            "involvedObject",
            "lastTimestamp",
            "regarding",
            "source",
        }
    ),
    "EventSeries": frozenset({"lastObservedTime"}),
    "ExternalMetricSource": frozenset({"metric", "target"}),
    "ExternalMetricStatus": frozenset({"current", "metric"}),
    "HTTPGetAction": frozenset({"port"}),
    "HTTPIngressPath": frozenset({"backend"}),
    "HTTPIngressRuleValue": frozenset({"paths"}),
    "HorizontalPodAutoscalerCondition": frozenset({"lastTransitionTime"}),
    "HorizontalPodAutoscalerSpec": frozenset({"scaleTargetRef"}),
    "HorizontalPodAutoscalerStatus": frozenset({"currentMetrics"}),
    "IngressServiceBackend": frozenset({"port"}),
    "IngressStatus": frozenset({"loadBalancer"}),
    "JobCondition": frozenset({"lastProbeTime", "lastTransitionTime"}),
    "JobSpec": frozenset({"template"}),
    "LimitRangeSpec": frozenset({"limits"}),
    "NamespaceCondition": frozenset({"lastTransitionTime"}),
    "NetworkPolicySpec": frozenset({"podSelector"}),
    "NodeCondition": frozenset({"lastHeartbeatTime", "lastTransitionTime"}),
    "NodeDaemonEndpoints": frozenset({"kubeletEndpoint"}),
    "NodeSelector": frozenset({"nodeSelectorTerms"}),
    "NodeStatus": frozenset({"daemonEndpoints", "nodeInfo"}),
    "ObjectMetricSource": frozenset({"describedObject", "metric", "target"}),
    "ObjectMetricStatus": frozenset({"current", "describedObject", "metric"}),
    "PersistentVolumeClaimCondition": frozenset({"lastProbeTime", "lastTransitionTime"}),
    "PersistentVolumeClaimSpec": frozenset({"resources"}),
    "PodCondition": frozenset({"lastProbeTime", "lastTransitionTime"}),
    "PodSpec": frozenset({"containers"}),
    "PodTemplate": frozenset({"template"}),
    "PodsMetricSource": frozenset({"metric", "target"}),
    "PodsMetricStatus": frozenset({"current", "metric"}),
    "PolicyRule": frozenset({"verbs"}),
    "PreferredSchedulingTerm": frozenset({"preference"}),
    "ProjectedVolumeSource": frozenset({"sources"}),
    "RBDPersistentVolumeSource": frozenset({"monitors"}),
    "RBDVolumeSource": frozenset({"monitors"}),
    "ReplicaSetCondition": frozenset({"lastTransitionTime"}),
    "ReplicaSetSpec": frozenset({"selector", "template"}),
    "ReplicationControllerCondition": frozenset({"lastTransitionTime"}),
    "ResourceFieldSelector": frozenset({"divisor"}),
    "ResourceMetricSource": frozenset({"target"}),
    "ResourceMetricStatus": frozenset({"current"}),
    "Role": frozenset({"rules"}),
    "RoleBinding": frozenset({"roleRef"}),
    "ScaleIOPersistentVolumeSource": frozenset({"secretRef"}),
    "ScaleIOVolumeSource": frozenset({"secretRef"}),
    "ServicePort": frozenset({"targetPort"}),
    "ServiceStatus": frozenset({"loadBalancer"}),
    "StatefulSetCondition": frozenset({"lastTransitionTime"}),
    "StatefulSetSpec": frozenset({"selector", "template", "updateStrategy"}),
    "TCPSocketAction": frozenset({"port"}),
    "TokenRequestSpec": frozenset({"audiences", "boundObjectRef"}),
    "TokenRequestStatus": frozenset({"expirationTimestamp"}),
    "TopologySelectorLabelRequirement": frozenset({"values"}),
    "VolumeAttachmentSpec": frozenset({"source"}),
    "VolumeError": frozenset({"time"}),
    "WebhookConversion": frozenset({"conversionReviewVersions"}),
    "WeightedPodAffinityTerm": frozenset({"podAffinityTerm"}),
}
"""Members of Go types (Kubernetes 1.24) that their zero value carries, besides non-pointer
``metadata``, ``spec`` and ``status``: non-pointer structs (times as null), and lists, maps and
pointers without ``omitempty`` (null). Scalars without ``omitempty`` are left out. (core/v1 and
events.k8s.io/v1 Events share a name: their members are listed together.)"""

_POINTER_STATUS: Final = frozenset({"CustomResourceSubresources"})
"""Types whose ``status`` is a pointer (not in the zero value)."""


class FieldType(Protocol):
    """The type of one value in an object, as managed fields see it."""

    def member(self, key: str) -> FieldType:
        """The type of a struct field's or a map entry's value."""
        ...

    def items(self) -> FieldType:
        """The type of a list's items."""
        ...

    def list_shape(self, items: Sequence[Any]) -> tuple[int, tuple[str, ...]]:
        """``ATOMIC``, ``SET`` or ``MAP`` (with its keys) for a list of ``items``."""
        ...

    @property
    def atomic(self) -> bool:
        """Whether a map or struct of this type is one leaf."""
        ...

    def is_field(self, key: str) -> bool:
        """Whether ``key`` is a declared field (not a map entry)."""
        ...

    def in_zero_value(self, key: str) -> bool:
        """Whether the Go zero value of this type carries member ``key``."""
        ...

    def drops_empty(self, key: str) -> bool:
        """Whether an empty map or list at member ``key`` disappears (Go's ``omitempty``)."""
        ...

    def zero_members(self) -> frozenset[str]:
        """The members the Go zero value of this type carries (``in_zero_value``)."""
        ...


class _Untyped:
    """No schema: maps are granular, lists atomic, every key a field."""

    atomic = False

    def member(self, key: str) -> FieldType:
        return self

    def items(self) -> FieldType:
        return self

    def list_shape(self, items: Sequence[Any]) -> tuple[int, tuple[str, ...]]:
        return ATOMIC, ()

    def is_field(self, key: str) -> bool:
        return True

    def in_zero_value(self, key: str) -> bool:
        return False

    def drops_empty(self, key: str) -> bool:
        return False

    def zero_members(self) -> frozenset[str]:
        return frozenset()


UNTYPED: Final[FieldType] = _Untyped()


# -- built-in kinds --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Member:
    model: Any  # the kcm model class of the value (or of a list's items), None if not a struct
    shape: str  # "struct", "list", "map" or "scalar"


@functools.cache
def _members(model: Any) -> dict[str, _Member]:
    """A model class's fields by their JSON name."""
    out: dict[str, _Member] = {}
    try:
        fields = msgspec.structs.fields(model)
    except TypeError:
        return out
    for f in fields:
        out[f.encode_name] = _classify(f.type)
    return out


def _classify(annotation: Any) -> _Member:
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if args and typing.get_origin(annotation) in (typing.Union, types.UnionType):
        annotation = args[0]
    origin = typing.get_origin(annotation)
    if origin is not None:
        inner = typing.get_args(annotation)
        if origin in (list, tuple, Sequence, typing.Sequence) or _is_sequence(origin):
            item = inner[0] if inner else None
            return _Member(item if _is_struct(item) else None, "list")
        if origin in (dict, Mapping, typing.Mapping) or _is_mapping(origin):
            value = inner[1] if len(inner) > 1 else None
            return _Member(value if _is_struct(value) else None, "map")
    if _is_struct(annotation):
        return _Member(annotation, "struct")
    return _Member(None, "scalar")


def _is_sequence(origin: Any) -> bool:
    return isinstance(origin, type) and issubclass(origin, Sequence) and origin is not str


def _is_mapping(origin: Any) -> bool:
    return isinstance(origin, type) and issubclass(origin, Mapping)


def _is_struct(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, msgspec.Struct)


def _name(model: Any) -> str:
    return model.__name__ if isinstance(model, type) else ""


_NO_INFO: Final = FieldInfo()


@dataclass(frozen=True, slots=True)
class _Builtin:
    """A value of a built-in kind: its kcm model class and strategic merge table type."""

    model: Any
    stype: str
    info: FieldInfo = _NO_INFO
    where: tuple[str, str] = ("", "")  # (parent model name, field): where the value sits
    entries: bool = False  # a Go map: its keys are entries, not fields
    root: bool = False

    @property
    def atomic(self) -> bool:
        return _name(self.model) in _ATOMIC_STRUCTS or self.where in _ATOMIC_MAPS

    def member(self, key: str) -> FieldType:
        if self.entries:
            return _Builtin(self.model, self.stype, _NO_INFO, (_name(self.model), key))
        info = field_info(self.stype, key)
        if info == _NO_INFO and self.model is not None:  # the table names Go types too
            info = field_info(_name(self.model), key)
        member = _members(self.model).get(key) if self.model is not None else None
        model = member.model if member is not None else None
        return _Builtin(
            model,
            info.type,
            info,
            (_name(self.model), key),
            entries=member is not None and member.shape == "map",
        )

    def items(self) -> FieldType:
        return _Builtin(self.model, self.stype, _NO_INFO, self.where)

    def list_shape(self, items: Sequence[Any]) -> tuple[int, tuple[str, ...]]:
        declared = _LIST_TYPES.get(self.where)
        if declared is not None:
            shape, keys = declared
            if shape == MAP and all(isinstance(i, dict) for i in items):
                return MAP, keys
            if shape == SET and all(not isinstance(i, dict | list) for i in items):
                return SET, ()
            return ATOMIC, ()
        info = self.info
        if not info.merges:
            return ATOMIC, ()
        if info.merge_key:
            keys = _MULTI_KEYS.get(self.where, (info.merge_key,))
            if all(isinstance(i, dict) and info.merge_key in i for i in items):
                return MAP, keys
            return ATOMIC, ()
        if all(not isinstance(i, dict | list) for i in items):
            return SET, ()
        return ATOMIC, ()

    def is_field(self, key: str) -> bool:
        return not self.entries

    def in_zero_value(self, key: str) -> bool:
        return key in self.zero_members()

    def zero_members(self) -> frozenset[str]:
        return _zero_members(self.model) if not self.entries else frozenset()

    def drops_empty(self, key: str) -> bool:
        if self.entries or self.model is None:
            return False
        member = _members(self.model).get(key)
        return (
            member is not None and member.shape in ("map", "list") and not self.in_zero_value(key)
        )


@functools.cache
def _zero_members(model: Any) -> frozenset[str]:
    if model is None:
        return frozenset()
    name = _name(model)
    members = _members(model)
    zero = {"metadata", "spec"} | ({"status"} if name not in _POINTER_STATUS else set())
    zero = {k for k in zero if k in members and members[k].shape == "struct"}
    return frozenset(zero | {k for k in _ZERO_VALUE.get(name, ()) if k in members})


def builtin_type(group: str, api_version: str, kind: str) -> FieldType:
    """The type of a built-in kind's objects (its kcm model, when there is one)."""
    stype = root_type(group, kind) or "Object"
    try:
        model: Any = model_for(api_version, kind)
    except KeyError:
        model = None
    return _Builtin(model, stype, root=True)


# -- custom resources ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Schema:
    """A value of a custom resource: its structural schema (None: nothing declared). The
    ``metadata`` of the object (and of embedded resources) is an ObjectMeta, whatever the
    schema says."""

    schema: Mapping[str, Any] | None
    resource: bool = False  # the object itself or an x-kubernetes-embedded-resource

    @property
    def atomic(self) -> bool:
        return bool(self.schema) and self.schema.get("x-kubernetes-map-type") == "atomic"  # type: ignore[union-attr]

    def _props(self) -> Mapping[str, Any]:
        props = self.schema.get("properties") if self.schema else None
        return props if isinstance(props, Mapping) else {}

    def member(self, key: str) -> FieldType:
        if key == "metadata" and self.resource:
            return _object_meta()
        prop = self._props().get(key)
        if isinstance(prop, Mapping):
            return _Schema(prop, bool(prop.get("x-kubernetes-embedded-resource")))
        additional = self.schema.get("additionalProperties") if self.schema else None
        return _Schema(additional if isinstance(additional, Mapping) else None)

    def items(self) -> FieldType:
        items = self.schema.get("items") if self.schema else None
        return _Schema(items if isinstance(items, Mapping) else None)

    def list_shape(self, items: Sequence[Any]) -> tuple[int, tuple[str, ...]]:
        list_type = self.schema.get("x-kubernetes-list-type") if self.schema else None
        if list_type == "map":
            keys = tuple(str(k) for k in self.schema.get("x-kubernetes-list-map-keys") or ())  # type: ignore[union-attr]
            if keys and all(isinstance(i, dict) for i in items):
                return MAP, keys
        elif list_type == "set" and all(not isinstance(i, dict | list) for i in items):
            return SET, ()
        return ATOMIC, ()

    def is_field(self, key: str) -> bool:
        return key in self._props() or (self.resource and key in ("apiVersion", "kind", "metadata"))

    def in_zero_value(self, key: str) -> bool:
        return False

    def drops_empty(self, key: str) -> bool:
        return False

    def zero_members(self) -> frozenset[str]:
        return frozenset()


def schema_type(schema: Mapping[str, Any] | None) -> FieldType:
    """The type of a custom resource's objects under its CRD version's schema."""
    return _Schema(schema, resource=True)


@functools.cache
def _object_meta() -> FieldType:
    return _Builtin(ObjectMeta, "ObjectMeta")
