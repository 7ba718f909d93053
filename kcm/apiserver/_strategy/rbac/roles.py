"""Roles, ClusterRoles and their bindings: names need only fit in a URL path."""

from __future__ import annotations

from ..._names import path_segment
from .._base import Strategy

__all__ = ["RbacStrategy"]


class RbacStrategy(Strategy):
    """The name rule kube-apiserver's ``pkg/registry/rbac`` kinds share
    (``ValidateRBACName``: ``path.IsValidPathSegmentName``)."""

    @staticmethod
    def name_rule(name: str) -> list[str]:
        return path_segment(name)
