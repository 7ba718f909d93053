"""Nodes: a create keeps the posted status (the kubelet registers its node with one)."""

from __future__ import annotations

from .._base import Strategy

__all__ = ["NodeStrategy"]


class NodeStrategy(Strategy):
    """kube-apiserver's ``pkg/registry/core/node`` (only what kcm needs of it)."""

    keeps_status_on_create = True
