"""Connect kcm's client to an embedded :class:`kcm.apiserver.ApiServer`.

The API server is a server: it does not import the client. This is the one place that knows
both, so tests and examples say ``ApiClient(client_config_for(server))``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kcm.client import ClientConfig, load_kubeconfig_dict

if TYPE_CHECKING:  # kcm.testing imports on a base install (FakeClock, eventually)
    from kcm.apiserver import ApiServer

__all__ = ["client_config_for"]


def client_config_for(server: ApiServer) -> ClientConfig:
    """A :class:`kcm.client.ClientConfig` for a running ``server``: its kubeconfig (URL,
    bearer token if it has one, CA if it serves TLS), loaded as kubectl would load it."""
    return load_kubeconfig_dict(server.kubeconfig())
