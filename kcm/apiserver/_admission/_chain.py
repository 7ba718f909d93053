"""The admission chain: kube-apiserver's plugin names, its fixed order, its default set, and
``--enable-admission-plugins`` / ``--disable-admission-plugins``.

Enabling adds to the defaults and disabling removes from them, in any order on the command
line: plugins always run in kube's order, every ``admit`` (mutating) phase before the kind's
validation and every ``validate`` phase after it. kcm implements the plugins in
:data:`IMPLEMENTED`; a kube plugin it does not implement may be disabled (nothing to do) but
not enabled, and a name kube does not know is an error either way.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from ._plugin import Attributes, Plugin
from .default_storage_class import DefaultStorageClass
from .default_toleration_seconds import DefaultTolerationSeconds
from .limit_ranger import LimitRanger
from .namespace_lifecycle import NamespaceLifecycle
from .object_in_use_protection import StorageObjectInUseProtection
from .persistent_volume_claim_resize import PersistentVolumeClaimResize
from .priority import Priority
from .resource_quota import ResourceQuota
from .service_account import ServiceAccount

__all__ = [
    "DEFAULT_PLUGINS",
    "IMPLEMENTED",
    "KUBE_ORDER",
    "AdmissionChain",
    "AdmissionConfigError",
    "enabled_plugins",
]

KUBE_ORDER: Final = (
    "AlwaysAdmit",
    "NamespaceAutoProvision",
    "NamespaceLifecycle",
    "NamespaceExists",
    "SecurityContextDeny",
    "LimitPodHardAntiAffinityTopology",
    "LimitRanger",
    "ServiceAccount",
    "NodeRestriction",
    "TaintNodesByCondition",
    "AlwaysPullImages",
    "ImagePolicyWebhook",
    "PodSecurity",
    "PodSecurityPolicy",
    "PodNodeSelector",
    "Priority",
    "DefaultTolerationSeconds",
    "PodTolerationRestriction",
    "EventRateLimit",
    "ExtendedResourceToleration",
    "PersistentVolumeLabel",
    "DefaultStorageClass",
    "StorageObjectInUseProtection",
    "OwnerReferencesPermissionEnforcement",
    "PersistentVolumeClaimResize",
    "RuntimeClass",
    "CertificateApproval",
    "CertificateSigning",
    "CertificateSubjectRestriction",
    "DefaultIngressClass",
    "DenyServiceExternalIPs",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionWebhook",
    "ResourceQuota",
    "AlwaysDeny",
)
"""Every plugin kube-apiserver knows, in the order it runs them (``AllOrderedPlugins``)."""

IMPLEMENTED: Final[dict[str, type[Plugin]]] = {
    p.name: p
    for p in (
        NamespaceLifecycle,
        LimitRanger,
        ServiceAccount,
        Priority,
        DefaultTolerationSeconds,
        DefaultStorageClass,
        StorageObjectInUseProtection,
        PersistentVolumeClaimResize,
        ResourceQuota,
    )
}
"""The plugins kcm has, by name."""

_KUBE_DEFAULTS: Final = frozenset(
    {
        "NamespaceLifecycle",
        "LimitRanger",
        "ServiceAccount",
        "DefaultStorageClass",
        "PersistentVolumeClaimResize",
        "DefaultTolerationSeconds",
        "MutatingAdmissionWebhook",
        "ValidatingAdmissionWebhook",
        "ResourceQuota",
        "StorageObjectInUseProtection",
        "Priority",
        "TaintNodesByCondition",
        "RuntimeClass",
        "CertificateApproval",
        "CertificateSigning",
        "CertificateSubjectRestriction",
        "DefaultIngressClass",
        "PodSecurity",
    }
)

DEFAULT_PLUGINS: Final = tuple(n for n in KUBE_ORDER if n in _KUBE_DEFAULTS and n in IMPLEMENTED)
"""What runs without flags: kube-apiserver's default plugins that kcm implements."""


class AdmissionConfigError(ValueError):
    """A bad ``--enable-admission-plugins`` / ``--disable-admission-plugins``."""


def _names(flag: str, names: Iterable[str]) -> list[str]:
    found = [n.strip() for n in names if n.strip()]
    unknown = [n for n in found if n not in KUBE_ORDER]
    if unknown:
        raise AdmissionConfigError(
            f"{flag} plugin {unknown[0]!r} is unknown; known plugins: {', '.join(KUBE_ORDER)}"
        )
    return found


def enabled_plugins(enable: Iterable[str] = (), disable: Iterable[str] = ()) -> tuple[str, ...]:
    """The plugins that run, in kube's order: the defaults, plus ``enable``, minus
    ``disable``.

    Raises:
        AdmissionConfigError: a name kube does not know, a name in both lists, or an enabled
            plugin kcm does not implement (the message lists the known ones).
    """
    on = _names("enable-admission-plugins", enable)
    off = _names("disable-admission-plugins", disable)
    both = sorted(set(on) & set(off))
    if both:
        raise AdmissionConfigError(
            f"{both} in enable-admission-plugins and disable-admission-plugins overlapped"
        )
    missing = [n for n in on if n not in IMPLEMENTED]
    if missing:
        raise AdmissionConfigError(
            f"enable-admission-plugins plugin {missing[0]!r} is not implemented by kcm; "
            f"it implements: {', '.join(n for n in KUBE_ORDER if n in IMPLEMENTED)}"
        )
    chosen = (set(DEFAULT_PLUGINS) | set(on)) - set(off)
    return tuple(n for n in KUBE_ORDER if n in chosen)


class AdmissionChain:
    """The enabled plugins, run in kube's order.

    Args:
        names: the plugins to run (default :data:`DEFAULT_PLUGINS`); see
            :func:`enabled_plugins` for building them from the flags.

    Raises:
        AdmissionConfigError: a name kcm does not implement.
    """

    def __init__(self, names: Iterable[str] | None = None) -> None:
        chosen = tuple(DEFAULT_PLUGINS if names is None else names)
        unknown = [n for n in chosen if n not in IMPLEMENTED]
        if unknown:
            raise AdmissionConfigError(
                f"admission plugin {unknown[0]!r} is not implemented by kcm; it implements: "
                f"{', '.join(n for n in KUBE_ORDER if n in IMPLEMENTED)}"
            )
        self.names = tuple(n for n in KUBE_ORDER if n in chosen)
        self._plugins = [IMPLEMENTED[n]() for n in self.names]

    def __repr__(self) -> str:
        return f"<AdmissionChain {','.join(self.names)}>"

    def admit(self, a: Attributes) -> None:
        """The mutating phase (before the kind's validation)."""
        for plugin in self._plugins:
            plugin.admit(a)

    def validate(self, a: Attributes) -> None:
        """The validating phase (after it, before storage)."""
        for plugin in self._plugins:
            plugin.validate(a)
