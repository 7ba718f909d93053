"""The secure port of ``kcm run`` as kube-controller-manager serves it: its TLS context, its
delegated authn/authz, one ``/healthz`` check per started controller, and what ``/metrics``
holds besides the controllers' metrics."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ._serving_flags import ServingSettings

__all__ = ["add_controller_checks", "log_accepted_flags", "metrics_registry", "serving_options"]

logger = logging.getLogger("kcm.cli")

_CERT_NAME = "kube-controller-manager"
"""kube's pair name in ``--cert-dir``: ``kube-controller-manager.crt`` and ``.key``."""

_UNCHECKED = frozenset({"serviceaccount-token"})
"""Controllers kube-controller-manager starts before the others and gives no check."""


def _ssl_context(serving: ServingSettings, host: str) -> Any:
    from kcm.errors import ConfigError
    from kcm.runtime import self_signed_context, serving_context

    if bool(serving.tls_cert_file) != bool(serving.tls_private_key_file):
        raise ConfigError("--tls-cert-file and --tls-private-key-file go together")
    if serving.tls_cert_file and serving.tls_private_key_file:
        return serving_context(serving.tls_cert_file, serving.tls_private_key_file)
    if serving.cert_dir:
        cert = Path(serving.cert_dir) / f"{_CERT_NAME}.crt"
        key = Path(serving.cert_dir) / f"{_CERT_NAME}.key"
        if cert.is_file() and key.is_file():
            return serving_context(str(cert), str(key))
    logger.info("Generated self-signed cert in-memory")
    return self_signed_context("localhost" if host in ("0.0.0.0", "::") else host)


async def _delegation_client(
    path: str | None, env: Mapping[str, str], stack: contextlib.AsyncExitStack, what: str
) -> Any:
    """A client on ``path``, else on the pod's service account (kube's fallback), else None."""
    from kcm.client import ApiClient, in_cluster_config, load_kubeconfig
    from kcm.errors import ConfigError

    if path:
        config = load_kubeconfig(path)
    elif env.get("KUBERNETES_SERVICE_HOST") and env.get("KUBERNETES_SERVICE_PORT"):
        try:
            config = in_cluster_config()
        except ConfigError as exc:  # kube: optional, a warning
            logger.warning("failed to read in-cluster kubeconfig for delegated %s: %s", what, exc)
            return None
    else:
        return None
    logger.debug("delegated %s through %s", what, config.server)
    return await stack.enter_async_context(ApiClient(config))


async def serving_options(
    serving: ServingSettings,
    host: str,
    env: Mapping[str, str],
    stack: contextlib.AsyncExitStack,
    *,
    embedded: bool,
) -> Any:
    """The manager's :class:`~kcm.runtime.ServingOptions` for these settings.

    Against a cluster, as kube-controller-manager: without delegation kubeconfigs (and outside
    a pod) ``/healthz`` is open and ``/metrics`` is only for ``system:masters`` client
    certificates (``--client-ca-file``). In embedded mode with none of the delegation flags the
    port is open: the embedded API server is itself open to the same loopback users, so
    refusing them the metrics would protect nothing.

    Raises:
        ConfigError: unusable TLS files, CA files or kubeconfigs.
    """
    from kcm.runtime import ServingOptions, ask_for_client_certificates

    auth = await _delegated_auth(serving, env, stack, embedded=embedded)
    context = _ssl_context(serving, host)
    ca_files = [f for f in (serving.client_ca_file, _front_proxy_ca(serving)) if f]
    if ca_files:
        ask_for_client_certificates(context, ca_files)
    return ServingOptions(ssl_context=context, auth=auth, fallback_to_free_port=embedded)


def _front_proxy_ca(serving: ServingSettings) -> str | None:
    return serving.requestheader.client_ca_file if serving.requestheader else None


async def _delegated_auth(
    serving: ServingSettings,
    env: Mapping[str, str],
    stack: contextlib.AsyncExitStack,
    *,
    embedded: bool,
) -> Any:
    """kube's delegated authn/authz of the port (None: open, embedded mode undelegated)."""
    from kcm.runtime import (
        ClientCertAuthenticator,
        DelegatedAuth,
        FrontProxyAuthenticator,
        load_ca_bundle,
    )

    authn = await _delegation_client(
        serving.authentication_kubeconfig, env, stack, "authentication"
    )
    authz = await _delegation_client(serving.authorization_kubeconfig, env, stack, "authorization")
    client_certs = front_proxy = None
    if serving.client_ca_file:
        client_certs = ClientCertAuthenticator(
            load_ca_bundle(serving.client_ca_file, "--client-ca-file")
        )
    if (header := serving.requestheader) is not None:
        front_proxy = FrontProxyAuthenticator(
            load_ca_bundle(header.client_ca_file, "--requestheader-client-ca-file"),
            allowed_names=header.allowed_names,
            username_headers=header.username_headers,
            group_headers=header.group_headers,
            extra_headers_prefixes=header.extra_headers_prefixes,
        )
    delegated = any(x is not None for x in (authn, authz, client_certs, front_proxy))
    if embedded and not delegated:
        return None
    if authz is None:
        logger.warning(
            "No authorization-kubeconfig provided, so SubjectAccessReview of authorization "
            "tokens won't work."
        )
    return DelegatedAuth(
        authn,
        authz,
        client_certs=client_certs,
        front_proxy=front_proxy,
        always_allow_paths=serving.always_allow_paths,
    )


def add_controller_checks(manager: Any, started: Iterable[str]) -> None:
    """A ``/healthz/<name>`` check per started controller, named as kube-controller-manager's
    (a controller that runs answers; one that was not started has none)."""
    for name in started:
        if name not in _UNCHECKED:
            manager.add_healthz_check(name, _running)


def _running() -> None:
    """kube's NamedPingChecker: healthy while the process serves."""


def log_accepted_flags(flags: Iterable[str]) -> None:
    """One line naming the flags kcm took but does not act on."""
    names = sorted(flags)
    if names:
        logger.info(
            "accepted for compatibility with kube-controller-manager, without effect in kcm: %s",
            ", ".join(names),
        )


def metrics_registry() -> tuple[Any, Any]:
    """kcm's ``/metrics`` registry, with the process, platform and GC collectors (Python's
    counterparts of Go's ``process_*`` and ``go_*``), and the client's ``rest_client_*``
    metrics on it (returned, for :func:`kcm.client.observe_requests`)."""
    from prometheus_client import (
        CollectorRegistry,
        GCCollector,
        PlatformCollector,
        ProcessCollector,
    )

    from kcm.client import RequestMetrics

    registry = CollectorRegistry()
    ProcessCollector(registry=registry)
    PlatformCollector(registry=registry)
    GCCollector(registry=registry)
    return registry, RequestMetrics(registry)
