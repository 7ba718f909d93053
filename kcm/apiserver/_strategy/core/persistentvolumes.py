"""PersistentVolumes: a create keeps the posted status."""

from __future__ import annotations

from .._base import Strategy

__all__ = ["PersistentVolumeStrategy"]


class PersistentVolumeStrategy(Strategy):
    """kube-apiserver's ``pkg/registry/core/persistentvolume`` (only what kcm needs of it)."""

    keeps_status_on_create = True
