"""Example: a ``ConfigMapSet`` custom resource and its controller, on kcm's public API.

Run it against the embedded API server with ``python -m examples.configmapset --once``; see
docs/example-configmapset.md.
"""

from .api import ConfigMapSet, ConfigMapSetSpec, ConfigMapSetStatus
from .reconciler import ConfigMapSetReconciler, add_to_manager

__all__ = [
    "ConfigMapSet",
    "ConfigMapSetReconciler",
    "ConfigMapSetSpec",
    "ConfigMapSetStatus",
    "add_to_manager",
]
