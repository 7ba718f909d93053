"""Who deletes a released volume with reclaim policy Delete (kube's ``findDeletablePlugin`` and
the in-tree deleters of kube-controller-manager).

kcm has no in-tree volume plugins. A volume provisioned by an external provisioner
(``pv.kubernetes.io/provisioned-by`` not under ``kubernetes.io/``) is left to it, as kube
leaves it; a ``hostPath`` volume under ``/tmp/`` is deleted (the API object only: kcm never
removes a directory on its own host, where kube's test-only deleter would); everything else has
no deleter, and the volume fails with kube's message."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kcm.controllerkit import ANN_DYNAMICALLY_PROVISIONED
from kcm.models.core_v1 import PersistentVolume

__all__ = ["DeleteDecision", "deleter_for"]

_HOST_PATH_DELETABLE = re.compile("/tmp/.+")
_NO_PLUGIN = "no deletable volume plugin matched"


@dataclass(frozen=True)
class DeleteDecision:
    """What to do with a released Delete volume.

    Attributes:
        external: an external provisioner deletes it; the binder does nothing.
        failure: why it cannot be deleted (the ``VolumeFailedDelete`` event's text), or None.
    """

    external: bool = False
    failure: str | None = None


def deleter_for(volume: PersistentVolume) -> DeleteDecision:
    """Who deletes ``volume``: see the module docstring."""
    name = volume.metadata.name
    provisioner = (volume.metadata.annotations or {}).get(ANN_DYNAMICALLY_PROVISIONED)
    if provisioner:
        if not provisioner.startswith("kubernetes.io/"):
            return DeleteDecision(external=True)
        return DeleteDecision(failure=_NO_PLUGIN)
    host_path = volume.spec.host_path if volume.spec else None
    if host_path is None:
        return DeleteDecision(
            failure=f'error getting deleter volume plugin for volume "{name}": {_NO_PLUGIN}'
        )
    path = host_path.path or ""
    if not _HOST_PATH_DELETABLE.search(path):
        return DeleteDecision(
            failure=f"host_path deleter only supports /tmp/.+ but received provided {path}"
        )
    return DeleteDecision()
