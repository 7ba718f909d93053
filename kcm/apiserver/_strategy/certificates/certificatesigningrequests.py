"""CertificateSigningRequests: names need only fit in a URL path."""

from __future__ import annotations

from ..._names import path_segment
from .._base import Strategy

__all__ = ["CertificateSigningRequestStrategy"]


class CertificateSigningRequestStrategy(Strategy):
    """kube-apiserver's ``pkg/registry/certificates/certificates`` (its name rule)."""

    @staticmethod
    def name_rule(name: str) -> list[str]:
        return path_segment(name)
