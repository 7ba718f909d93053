"""Pods: defaults and status on create, graceful deletion, ``/binding``; ``/eviction`` is in
:mod:`.eviction`, the streaming subresources (``/log``, ``/exec``, ``/attach``,
``/portforward``) are in :mod:`.podstreams`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._field_errors import Cause
from ..._status import StatusError, status_success
from ..._store import Obj, deep_copy
from .._base import Strategy
from .._context import Context, Verbs
from .._subresource import StatusSubresource, Subresource
from .eviction import PodEviction
from .podspec import default_pod_spec, validate_pod_spec
from .podstreams import PodLog, PodPortForward, PodStream

__all__ = ["PodStrategy"]


class PodStrategy(Strategy):
    """kube-apiserver's ``pkg/registry/core/pod``: a pod bound to a node is deleted gracefully
    (it stays, with ``deletionTimestamp`` = now + grace, until the kubelet deletes it with
    grace period 0)."""

    return_deleted_object = True

    def validate(self, obj: Obj) -> list[Cause]:
        return super().validate(obj) + validate_pod_spec(obj.get("spec"), "spec")

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        super().prepare_for_create(obj, ctx)
        obj["status"] = {"phase": "Pending", "qosClass": "BestEffort"}
        spec = obj.setdefault("spec", {})
        default_pod_spec(spec)
        spec.setdefault("serviceAccountName", "default")
        spec.setdefault("enableServiceLinks", True)

    def prepare_for_delete(
        self, old: Obj, new: Obj, options: Obj, query: dict[str, str], ctx: Context
    ) -> None:
        """Every pod deletion is graceful (``CheckGracefulDelete``): ``deletionTimestamp`` =
        now + the grace period, which is 0 (deleted at once, but the answer still carries both
        fields) for a pod on no node or one that has finished; a second delete may only
        shorten it."""
        grace: Any = options.get("gracePeriodSeconds", query.get("gracePeriodSeconds"))
        meta = new["metadata"]
        if old["metadata"].get("deletionTimestamp"):
            if grace is not None and int(grace) == 0:
                meta["deletionGracePeriodSeconds"] = 0
            return
        spec = old.get("spec") or {}
        if grace is None:
            grace = spec.get("terminationGracePeriodSeconds") or 0
        grace = int(grace)
        phase = (old.get("status") or {}).get("phase")
        if not spec.get("nodeName") or phase in ("Succeeded", "Failed"):
            grace = 0
        grace = max(grace, 1) if grace < 0 else grace
        meta["deletionGracePeriodSeconds"] = grace
        meta["deletionTimestamp"] = ctx.time_in(grace)

    def deletion_held(self, obj: Obj) -> bool:
        """A pod whose grace period runs stays until the kubelet deletes it."""
        return bool(obj["metadata"].get("deletionGracePeriodSeconds"))

    def subresource(self, name: str) -> Subresource:
        if name == "status":
            return _Status(self)
        if name == "binding":
            return _Binding(self)
        if name == "eviction":
            return PodEviction(self)
        if name == "log":
            return PodLog(self)
        if name in ("exec", "attach"):
            return PodStream(self)
        if name == "portforward":
            return PodPortForward(self)
        return super().subresource(name)


class _Status(StatusSubresource):
    """``pods/status`` (``podStatusStrategy``): the spec stays, metadata changes apply (labels,
    annotations), except ownerReferences, which old kubelets used to corrupt."""

    def prepare_for_update(self, new: Obj, old: Obj) -> Obj:
        merged = deep_copy(new)
        if "spec" in old:
            merged["spec"] = deep_copy(old["spec"])
        else:
            merged.pop("spec", None)
        meta = merged.setdefault("metadata", {})
        owners = old["metadata"].get("ownerReferences")
        if owners is not None:
            meta["ownerReferences"] = owners
        else:
            meta.pop("ownerReferences", None)
        return merged


class _Binding(Subresource):
    """``pods/binding``: the scheduler's POST sets ``spec.nodeName``, the Binding's annotations
    and PodScheduled, once (``BindingREST``)."""

    def post(
        self,
        verbs: Verbs,
        ns: str,
        name: str,
        body: Any,
        *,
        query: Mapping[str, str] | None = None,
    ) -> Obj:
        res = self.strategy.resource
        binding = body if isinstance(body, dict) else {}
        meta = binding.get("metadata") or {}
        if meta.get("name", "") != name:
            raise StatusError.bad_request("name in URL does not match name in Binding object")
        target = binding.get("target") or {}
        node = target.get("name")
        if target.get("kind") not in (None, "", "Node"):
            raise StatusError.internal(
                f'target.kind: Unsupported value: "{target["kind"]}": supported values: "Node"'
            )
        if not node:
            raise StatusError.internal("target.name: Required value")
        old = verbs.existing(res, ns, name)
        if old["metadata"].get("deletionTimestamp"):
            why = f"pod {name} is being deleted, cannot be assigned to a host"
            raise StatusError.conflict("", "pods/binding", name, why)
        if (old.get("spec") or {}).get("nodeName"):
            raise StatusError.conflict(
                "",
                "pods/binding",
                name,
                f'pod {name} is already assigned to node "{old["spec"]["nodeName"]}"',
            )
        new = deep_copy(old)
        new.setdefault("spec", {})["nodeName"] = node
        if meta.get("annotations"):
            new["metadata"]["annotations"] = {
                **(new["metadata"].get("annotations") or {}),
                **meta["annotations"],
            }
        conditions = [
            c
            for c in (new.setdefault("status", {}).get("conditions") or [])
            if c.get("type") != "PodScheduled"
        ]
        conditions.append(
            {
                "type": "PodScheduled",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": verbs.now(),
            }
        )
        new["status"]["conditions"] = conditions
        verbs.commit(res, new, old)
        return status_success()
