"""The feature gates storage-version-gc needs, read through one accessor.

kcm has no ``--feature-gates`` yet: :func:`feature_gate` reads the manager's
``feature_gates`` mapping when there is one (gate name to bool) and otherwise kube 1.24's
defaults, so switching to real flags later changes only this function.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["DEFAULTS", "REQUIRED_GATES", "feature_gate"]

REQUIRED_GATES = ("APIServerIdentity", "StorageVersionAPI")
"""Both must be on for kube-controller-manager to run storage-version-gc."""

DEFAULTS: Mapping[str, bool] = {"APIServerIdentity": False, "StorageVersionAPI": False}
"""Kubernetes 1.24's defaults (both alpha)."""


def feature_gate(manager: Any, name: str) -> bool:
    """Whether gate ``name`` is on for ``manager`` (its ``feature_gates``, else the default).

    Raises:
        KeyError: a gate this module does not know.
    """
    gates = getattr(manager, "feature_gates", None) or {}
    return bool(gates.get(name, DEFAULTS[name]))
