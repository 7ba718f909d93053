"""The base strategy: what kcm does for every kind, and the hooks a kind's strategy overrides."""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

from .._field_errors import Cause
from .._field_types import FieldType, builtin_type
from .._names import dns1123_subdomain, path_segment
from .._object_meta import validate_object_meta, validate_object_meta_update
from .._registry import Resource
from .._requester import Requester
from .._store import Obj, deep_copy
from ._context import Context
from ._scale import ScalePaths, ScaleSubresource
from ._subresource import StatusSubresource, Subresource
from .core.podspec import default_pod_spec

__all__ = ["GenerationalStrategy", "Strategy", "UpdateRules", "zero_template_meta"]

_NOT_SPEC = ("metadata", "status", "apiVersion", "kind")


class UpdateRules(Protocol):
    """The update hooks, which the main resource (a :class:`Strategy`) and each subresource
    (a :class:`Subresource`) answer for themselves."""

    def prepare_for_update(self, new: Obj, old: Obj) -> Obj: ...

    def default_on_update(self, obj: Obj) -> None: ...

    def validate_update(self, new: Obj, old: Obj) -> list[Cause]: ...

    def stamp_update(self, new: Obj, old: Obj, now: str) -> None: ...


class Strategy:
    """The rules of one kind, as kube-apiserver's ``pkg/registry/<group>/<kind>/strategy.go``.

    This base is every kind's generic behaviour. A kind with rules of its own subclasses it,
    overrides the hooks it needs and calls ``super()`` for the generic part. One instance serves
    one request for :attr:`resource` (a custom resource's strategy reads its CRD from it).
    """

    keeps_status_on_create: ClassVar[bool] = False
    """Whether a create keeps the posted ``status`` (kinds with a status subresource lose it)."""

    return_deleted_object: ClassVar[bool] = False
    """Whether DELETE answers with the deleted object (otherwise a Success Status)."""

    strategic_merge_patch: ClassVar[bool] = True
    """Whether the kind takes strategic merge patches (415 otherwise)."""

    kube_finalizer_names: ClassVar[bool] = True
    """Whether finalizer names must be qualified or standard (the Kubernetes API's kinds; not
    custom resources and their definitions)."""

    manages_generation: ClassVar[bool] = False
    """Whether the server keeps ``metadata.generation`` (1 on create, one more per spec
    change). Kinds that do not (ConfigMaps, Pods, Services, ...) keep what a client sent on
    create and never change it on update, as kube-apiserver's strategies do."""

    status_writes_metadata: ClassVar[bool] = True
    """Whether a ``/status`` write changes metadata as well (built-in kinds' status strategies
    reset only the spec; custom resources' keep everything but status)."""

    status_keeps_metadata: ClassVar[tuple[str, ...]] = ()
    """Metadata fields a ``/status`` write cannot change (Deployments: ``labels``)."""

    allow_unconditional_update: ClassVar[bool] = True
    """Whether a PUT may omit ``metadata.resourceVersion`` (otherwise 422)."""

    answers_create: ClassVar[bool] = False
    """A create is answered by :meth:`answer` and nothing is stored (access reviews)."""

    def __init__(self, resource: Resource) -> None:
        self.resource = resource

    # -- decoding --------------------------------------------------------------------------

    def admit_create(self) -> None:
        """Refuse any create of this kind now (raise a StatusError); runs first on a create."""

    def decode(self, obj: Obj) -> None:
        """What decoding a create or update body does to it before any other hook."""

    # -- validation ------------------------------------------------------------------------

    @staticmethod
    def name_rule(name: str) -> list[str]:
        """Why ``name`` is no valid ``metadata.name`` of this kind (``NameIsDNSSubdomain``)."""
        return dns1123_subdomain(name)

    def validate(self, obj: Obj) -> list[Cause]:
        """Field errors of a new object (``Validate``): ObjectMeta; kinds add their own."""
        return self.validate_metadata(obj)

    def validate_metadata(self, obj: Obj) -> list[Cause]:
        """The kind's ``ValidateObjectMeta`` (its name rule)."""
        return validate_object_meta(
            obj,
            name_rule=self.name_rule,
            namespaced=self.resource.namespaced,
            kube_finalizers=self.kube_finalizer_names,
        )

    def validate_metadata_update(self, new: Obj, old: Obj) -> list[Cause]:
        """The kind's ``ValidateObjectMetaUpdate``."""
        return validate_object_meta_update(new, old, kube_finalizers=self.kube_finalizer_names)

    def validate_update(self, new: Obj, old: Obj) -> list[Cause]:
        """Field errors of an update (``ValidateUpdate``). Most kinds: ObjectMetaUpdate, then
        the new object's validation; kinds add what may not change."""
        return self.validate_metadata_update(new, old) + self.validate(new)

    def validate_common_update(self, new: Obj, old: Obj) -> list[Cause]:
        """What every update of every kind is checked for before the kind's own rules
        (``validateCommonFields``): ObjectMeta, names as path segments, and ObjectMetaUpdate.
        (A metadata error is therefore reported more than once, as kube-apiserver does.)"""
        common = validate_object_meta(
            new, name_rule=path_segment, namespaced=self.resource.namespaced, kube_finalizers=False
        )
        return common + validate_object_meta_update(new, old, kube_finalizers=False)

    # -- create ----------------------------------------------------------------------------

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        """Reset what a client may not set and fill defaults (``PrepareForCreate``).

        Runs before validation, on an object whose metadata the server has already stamped.
        """
        if self.resource.has_status and not self.keeps_status_on_create:
            obj.pop("status", None)
        self.default(obj)

    def stamp_creator(self, obj: Obj, who: Requester) -> None:
        """Record who created ``obj`` (after :meth:`prepare_for_create`; a CSR's
        ``spec.username``): nothing for most kinds."""

    def default(self, obj: Obj) -> None:
        """Scheme defaults, applied on create and on update: the pod template's, if any."""
        template = self.pod_template(obj)
        if isinstance(template, dict) and isinstance(template.get("spec"), dict):
            default_pod_spec(template["spec"])

    def pod_template(self, obj: Obj) -> Any:
        """The pod template the object carries (built-ins: ``spec.template``), or None."""
        spec = obj.get("spec")
        return spec.get("template") if isinstance(spec, dict) else None

    status_zero: ClassVar[Obj | None] = None
    """The status Go writes for the kind's zero status struct (its fields without
    ``omitempty``), e.g. ``{"replicas": 0}``; None: the kind writes no such status."""

    status_omitempty: ClassVar[tuple[str, ...]] = ()
    """Integer status fields Go leaves out when 0 (``omitempty``, not pointers), e.g. a
    ReplicaSet's ``availableReplicas``: a 0 a client sends is not stored."""

    def canonicalize(self, obj: Obj) -> None:
        """What Go writes for fields it always writes (``Canonicalize``, and the encoding of
        zero structs): the status's non-optional fields, a pod template's
        ``metadata.creationTimestamp: null``; and what it leaves out (the status's zero
        ``omitempty`` counts)."""
        if self.status_zero is not None:
            status = obj.get("status")
            if not isinstance(status, dict):
                status = obj["status"] = {}
            for key, zero in self.status_zero.items():
                if key not in status:
                    status[key] = deep_copy(zero)
        status = obj.get("status")
        if isinstance(status, dict):
            for key in self.status_omitempty:
                value = status.get(key)
                if value == 0 and isinstance(value, int) and not isinstance(value, bool):
                    del status[key]
        zero_template_meta(self.pod_template(obj))

    def answer(self, obj: Obj, who: Requester, ctx: Context) -> Obj:
        """What a create of a kind that is never stored answers, for the requester ``who``
        (only where :attr:`answers_create` is set)."""
        raise NotImplementedError

    # -- update ----------------------------------------------------------------------------

    def prepare_for_update(self, new: Obj, old: Obj) -> Obj:
        """What of ``old`` an update keeps (``PrepareForUpdate``): status, if a subresource."""
        if self.resource.has_status:
            if "status" in old:
                new["status"] = old["status"]
            else:
                new.pop("status", None)
        return new

    def default_on_update(self, obj: Obj) -> None:
        """Defaults for an updated object (after its generation was decided)."""
        self.default(obj)

    def stamp_update(self, new: Obj, old: Obj, now: str) -> None:
        """Times an update records (after :meth:`prepare_for_update`; ``now`` as
        ``metav1.Time``): none for most kinds."""

    def spec_changed(self, new: Obj, old: Obj) -> bool:
        """Whether anything but metadata and status differs (what validation and
        ``metadata.generation`` look at)."""
        return _spec(new) != _spec(old)

    def generation_changed(self, new: Obj, old: Obj) -> bool:
        """Whether writing ``new`` over ``old`` is a new generation (the spec changed)."""
        return self.spec_changed(new, old)

    def next_generation(self, new: Obj, old: Obj) -> int:
        """``metadata.generation`` after writing ``new`` over ``old`` (0: none). A client
        cannot set it on update; kinds that manage it bump it when :meth:`generation_changed`;
        a deletion that starts bumps any generation that is set (``BeforeDelete``)."""
        generation = int(old["metadata"].get("generation") or 0)
        deleting = new["metadata"].get("deletionTimestamp") and not old["metadata"].get(
            "deletionTimestamp"
        )
        bumped = self.manages_generation and self.generation_changed(new, old)
        if bumped or (deleting and generation > 0):
            generation += 1
        return generation

    # -- delete ----------------------------------------------------------------------------

    def prepare_for_delete(
        self, old: Obj, new: Obj, options: Obj, query: dict[str, str], ctx: Context
    ) -> None:
        """Change ``new`` (a copy of ``old``) for a DELETE (a graceful deletion's deadline)."""

    def deletion_held(self, obj: Obj) -> bool:
        """Whether a deleted object stays stored for a reason other than its finalizers."""
        return False

    # -- after a write ---------------------------------------------------------------------

    def after_write(self, obj: Obj, ctx: Context) -> None:
        """Runs after ``obj`` was created or updated (not after a dry run)."""

    def after_delete(self, obj: Obj, ctx: Context) -> None:
        """Runs after ``obj`` was removed from storage."""

    # -- reads -----------------------------------------------------------------------------

    def present(self, obj: Obj) -> Obj:
        """The stored object as served under :attr:`resource`'s version."""
        return obj

    def selectable_fields(self) -> tuple[str, ...]:
        """JSON paths field selectors may name beyond the kind's built-in field labels."""
        return ()

    # -- managed fields ----------------------------------------------------------------------

    def field_type(self) -> FieldType:
        """The type managedFields are computed with (server-side apply's schema)."""
        res = self.resource
        return builtin_type(res.group, res.api_version, res.kind)

    def reset_fields(self, subresource: str) -> tuple[tuple[str, ...], ...]:
        """The FieldsV1 paths a write here resets, which nobody owns through it (kube's
        ``GetResetFields``): ``spec`` on ``/status``, ``status`` on the main resource of a
        kind with a status subresource."""
        if subresource == "status":
            return (("f:spec",),)
        if not subresource and self.resource.has_status:
            return (("f:status",),)
        return ()

    # -- subresources ----------------------------------------------------------------------

    def subresource(self, name: str) -> Subresource:
        """The rules of ``<kind>/<name>`` (``status`` and ``scale`` for every kind)."""
        if name == "status":
            return StatusSubresource(self)
        if name == "scale" and self.resource.has_scale:
            return ScaleSubresource(self, self.scale_paths())
        return Subresource(self)

    def scale_paths(self) -> ScalePaths:
        """Where ``/scale`` reads and writes the replica counts."""
        return ScalePaths()


class GenerationalStrategy(Strategy):
    """A kind without rules of its own whose ``metadata.generation`` the server keeps
    (Ingresses, NetworkPolicies, PodDisruptionBudgets, EndpointSlices, ...)."""

    manages_generation = True


def zero_template_meta(template: Any) -> None:
    """An embedded ObjectMeta as Go writes it: ``creationTimestamp: null`` when unset."""
    if isinstance(template, dict):
        meta = template.get("metadata")
        if not isinstance(meta, dict):
            meta = template["metadata"] = {}
        meta.setdefault("creationTimestamp", None)


def _spec(obj: Obj) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in _NOT_SPEC}
