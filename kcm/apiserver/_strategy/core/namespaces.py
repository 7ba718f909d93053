"""Namespaces: the ``kubernetes`` finalizer, phase Terminating on delete, and ``/finalize``.

A deleted namespace stays until the namespace controller has emptied it and PUT ``/finalize``
without the ``kubernetes`` finalizer (``spec.finalizers``, not ``metadata.finalizers``).

A namespace gets its ``default`` ServiceAccount as soon as it exists: in a cluster,
kube-controller-manager's serviceaccounts controller creates it, and pods cannot be created
without it (ServiceAccount admission). The server does it, so that pods can be created
without that controller running; ``ApiServer(default_service_accounts=False)`` leaves it to
the controller (kcm's ``serviceaccount`` controller).
"""

from __future__ import annotations

import uuid

from ..._names import dns1123_label
from ..._store import Obj, deep_copy
from .._base import Strategy
from .._context import Context
from .._subresource import Subresource

__all__ = ["NamespaceStrategy", "ensure_default_service_account"]


class NamespaceStrategy(Strategy):
    """kube-apiserver's ``pkg/registry/core/namespace``."""

    return_deleted_object = True

    @staticmethod
    def name_rule(name: str) -> list[str]:
        return dns1123_label(name)

    def default(self, obj: Obj) -> None:
        """``SetDefaults_Namespace``: a named namespace's ``kubernetes.io/metadata.name``
        label (a generated name gets it in :meth:`prepare_for_create`)."""
        super().default(obj)
        name = obj["metadata"].get("name")
        if name:
            labels = obj["metadata"].get("labels")
            if not isinstance(labels, dict):
                labels = obj["metadata"]["labels"] = {}
            labels["kubernetes.io/metadata.name"] = name

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        super().prepare_for_create(obj, ctx)
        spec = obj.setdefault("spec", {})
        finalizers = list(spec.get("finalizers") or [])
        if "kubernetes" not in finalizers:  # required on create, removed by /finalize
            finalizers.append("kubernetes")
        spec["finalizers"] = finalizers
        obj["status"] = {"phase": "Active"}
        labels = obj["metadata"].setdefault("labels", {})
        labels["kubernetes.io/metadata.name"] = obj["metadata"]["name"]

    def after_write(self, obj: Obj, ctx: Context) -> None:
        active = (obj.get("status") or {}).get("phase") == "Active"
        if active and ctx.default_service_accounts:
            ensure_default_service_account(obj["metadata"]["name"], ctx)

    def prepare_for_update(self, new: Obj, old: Obj) -> Obj:
        """The spec (its finalizers) changes only through ``/finalize``; the
        ``kubernetes.io/metadata.name`` label always says the name."""
        new = super().prepare_for_update(new, old)
        new["spec"] = old.get("spec", {})
        labels = new["metadata"].get("labels")
        if not isinstance(labels, dict):
            labels = new["metadata"]["labels"] = {}
        labels["kubernetes.io/metadata.name"] = old["metadata"]["name"]
        return new

    def prepare_for_delete(
        self, old: Obj, new: Obj, options: Obj, query: dict[str, str], ctx: Context
    ) -> None:
        new.setdefault("status", {})["phase"] = "Terminating"

    def deletion_held(self, obj: Obj) -> bool:
        """A namespace stays while ``spec.finalizers`` is not empty."""
        return bool((obj.get("spec") or {}).get("finalizers"))

    def subresource(self, name: str) -> Subresource:
        if name == "finalize":
            return _Finalize(self)
        return super().subresource(name)


def ensure_default_service_account(namespace: str, ctx: Context) -> None:
    """Create the ``default`` ServiceAccount of ``namespace`` if it has none."""
    key = ("", "serviceaccounts")
    if ctx.store.get(key, namespace, "default") is not None:
        return
    meta = {
        "name": "default",
        "namespace": namespace,
        "uid": str(uuid.uuid4()),
        "creationTimestamp": ctx.now(),
    }
    ctx.store.create(key, {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta})


class _Finalize(Subresource):
    """``namespaces/finalize``: only ``spec.finalizers`` changes."""

    def prepare_for_update(self, new: Obj, old: Obj) -> Obj:
        merged = deep_copy(old)
        merged.setdefault("spec", {})["finalizers"] = list(
            (new.get("spec") or {}).get("finalizers") or []
        )
        return merged
