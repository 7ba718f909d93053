"""The feature gates storage-version-gc needs (``--feature-gates``, through
:func:`kcm.controllerkit.feature_gates`)."""

from __future__ import annotations

from typing import Any

from kcm.controllerkit import feature_gates

__all__ = ["REQUIRED_GATES", "feature_gate"]

REQUIRED_GATES = ("APIServerIdentity", "StorageVersionAPI")
"""Both must be on for kube-controller-manager to run storage-version-gc."""


def feature_gate(manager: Any, name: str) -> bool:
    """Whether gate ``name`` is on for ``manager`` (its ``--feature-gates``, else 1.24's
    defaults: both gates are alpha and off).

    Raises:
        KeyError: a gate Kubernetes 1.24 does not know.
    """
    return feature_gates(manager).enabled(name)
