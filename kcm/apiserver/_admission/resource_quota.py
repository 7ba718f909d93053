"""``ResourceQuota``: a write that would take a namespace over one of its quotas is refused
(403 with kube's text), and one that fits is charged into the quotas' ``status.used`` at
once, so two creates in a row cannot both slip under a limit the controller has not
recounted yet. The usage rules are :mod:`kcm.quota`'s, shared with the controller.

kube-apiserver batches the writes of a namespace and updates the quotas with optimistic
concurrency; here a write is checked and charged in one synchronous step of the store, which
gives the same guarantee. A dry run is checked but not charged. Subresources, cluster-scoped
kinds and namespaces themselves are never charged.
"""

from __future__ import annotations

from typing import Final

from kcm.quota import QuotaExceeded, charge, evaluator_for

from .._status import StatusError
from .._store import deep_copy
from ._plugin import Attributes, Plugin

__all__ = ["ResourceQuota"]

_QUOTAS: Final = ("", "resourcequotas")


class ResourceQuota(Plugin):
    """The plugin (validating)."""

    name = "ResourceQuota"

    def validate(self, a: Attributes) -> None:
        res = a.resource
        if a.subresource or not a.namespace or not res.namespaced:
            return
        evaluator = evaluator_for(res.group, res.plural)
        if evaluator is None or not evaluator.handles(a.operation):
            return
        quotas = sorted(a.store.items(_QUOTAS, a.namespace), key=lambda q: q["metadata"]["name"])
        if not quotas:
            return
        try:
            charged = charge(quotas, evaluator, a.operation, a.obj, a.old, a.now())
        except QuotaExceeded as exc:
            raise StatusError.forbidden(res.group, res.plural, a.name, str(exc)) from None
        if a.dry_run:
            return
        for quota in quotas:
            used = charged.get(quota["metadata"]["name"])
            if used is not None:
                new = deep_copy(quota)
                new.setdefault("status", {})["used"] = used
                a.store.update(_QUOTAS, new, quota)
