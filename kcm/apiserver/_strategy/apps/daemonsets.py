"""DaemonSets: validated as workloads, without replicas."""

from __future__ import annotations

from .workloads import WorkloadStrategy

__all__ = ["DaemonSetStrategy"]


class DaemonSetStrategy(WorkloadStrategy):
    """kube-apiserver's ``pkg/registry/apps/daemonset`` (its validation)."""

    selector_owner = "daemonset"
    has_replicas = False
