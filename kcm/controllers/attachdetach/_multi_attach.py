"""Multi-attach: a volume only one node may use is not attached to a second node while it is
attached (or attaching) to another; the pods waiting for it are told why, once.

kube's ``IsMultiAttachAllowed`` and the reconciler's ``reportMultiAttachError``."""

from __future__ import annotations

from collections.abc import Iterable

from kcm.models.core_v1 import PersistentVolume, Pod

__all__ = ["multi_attach_allowed", "multi_attach_message"]


def multi_attach_allowed(pv: PersistentVolume | None) -> bool:
    """Whether the PV may be attached to several nodes: no access modes (unknown: the attacher
    decides), or ReadWriteMany / ReadOnlyMany among them."""
    modes = (pv.spec.access_modes if pv is not None and pv.spec else None) or ()
    return not modes or any(m in ("ReadWriteMany", "ReadOnlyMany") for m in modes)


def multi_attach_message(pv_name: str, waiting: Pod, users: Iterable[Pod]) -> str:
    """The ``FailedAttachVolume`` message for ``waiting``, given the pods using the volume on
    the other node(s) (names only of those in its own namespace)."""
    local = [
        p.metadata.name or "" for p in users if p.metadata.namespace == waiting.metadata.namespace
    ]
    others = sum(1 for p in users if p.metadata.namespace != waiting.metadata.namespace)
    if not local and not others:
        why = "Volume is already exclusively attached to one node and can't be attached to another"
    elif local:
        why = f"Volume is already used by pod(s) {', '.join(local)}"
        if others:
            why += f" and {others} pod(s) in different namespaces"
    else:
        why = f"Volume is already used by {others} pod(s) in different namespaces"
    return f'Multi-Attach error for volume "{pv_name}" {why}'
