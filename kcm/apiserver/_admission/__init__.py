"""Admission: what kube-apiserver's admission plugins do to a write before it is stored.

A small registry of plugins (:mod:`._chain`) run in kube-apiserver's order, each switchable
with ``--enable-admission-plugins`` / ``--disable-admission-plugins``. kcm has
``NamespaceLifecycle`` (create only in a namespace that exists and is not terminating),
``LimitRanger`` (LimitRange defaults and bounds for pods and claims), ``ServiceAccount`` (a
pod names an existing account and gets its token volume), ``Priority`` (a pod's priority from
its PriorityClass), ``DefaultTolerationSeconds`` (pods tolerate not-ready and unreachable
nodes for five minutes), ``StorageObjectInUseProtection`` (claims and volumes get their
protection finalizer), ``PersistentVolumeClaimResize`` (a claim grows only when bound and
its class allows expansion), ``ResourceQuota`` (refuse and charge against the namespace's
quotas). The mutating phase runs before the
kind's strategy, as in kube-apiserver (a missing namespace is a 404 before an invalid name is
a 422); the validating phase after the kind's validation, just before the write is stored.
"""

from __future__ import annotations

from ._chain import DEFAULT_PLUGINS as DEFAULT_PLUGINS
from ._chain import IMPLEMENTED as IMPLEMENTED
from ._chain import KUBE_ORDER as KUBE_ORDER
from ._chain import AdmissionChain as AdmissionChain
from ._chain import AdmissionConfigError as AdmissionConfigError
from ._chain import enabled_plugins as enabled_plugins
from ._plugin import Attributes as Attributes
from ._plugin import Plugin as Plugin

__all__ = [
    "DEFAULT_PLUGINS",
    "IMPLEMENTED",
    "KUBE_ORDER",
    "AdmissionChain",
    "AdmissionConfigError",
    "Attributes",
    "Plugin",
    "enabled_plugins",
]
