"""Controller identities: ``--use-service-account-credentials``, as kube-controller-manager's
``DynamicControllerClientBuilder`` (``k8s.io/controller-manager/pkg/clientbuilder``).

Each controller talks as the ServiceAccount ``kube-system/<client name>`` (kube's names:
``daemon-set-controller``, ``generic-garbage-collector``, ...), which the bootstrap RBAC
policy binds to ``system:controller:<client name>``. The account is created if missing; the
token is a TokenRequest for an hour, renewed when 80% of its lifetime has passed (kube's 20%
leeway, lifetime at least ten minutes) or after a 401. The tokens controller itself and the
informers use kcm's own credentials, as kube's root client builder.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime
from types import MappingProxyType
from typing import Any

import anyio
import msgspec

from kcm.client import TokenSource
from kcm.errors import AlreadyExists, KcmError, NotFound
from kcm.models import ObjectMeta, ServiceAccount

__all__ = [
    "CLIENT_NAMES",
    "ROOT_CONTROLLERS",
    "ServiceAccountTokens",
    "anonymous",
    "client_name",
]

logger = logging.getLogger("kcm.cli")

CLIENT_NAMES: Mapping[str, str] = MappingProxyType(
    {
        "attachdetach": "attachdetach-controller",
        "bootstrapsigner": "bootstrap-signer",
        "cloud-node": "cloud-node-controller",
        "cloud-node-lifecycle": "node-controller",
        "clusterrole-aggregation": "clusterrole-aggregation-controller",
        "cronjob": "cronjob-controller",
        "csrapproving": "certificate-controller",
        "csrcleaner": "certificate-controller",
        "csrsigning": "certificate-controller",
        "daemonset": "daemon-set-controller",
        "deployment": "deployment-controller",
        "disruption": "disruption-controller",
        "endpoint": "endpoint-controller",
        "endpointslice": "endpointslice-controller",
        "endpointslicemirroring": "endpointslicemirroring-controller",
        "ephemeral-volume": "ephemeral-volume-controller",
        "garbagecollector": "generic-garbage-collector",
        "horizontalpodautoscaling": "horizontal-pod-autoscaler",
        "job": "job-controller",
        "namespace": "namespace-controller",
        "nodeipam": "node-controller",
        "nodelifecycle": "node-controller",
        "persistentvolume-binder": "persistent-volume-binder",
        "persistentvolume-expander": "expand-controller",
        "podgc": "pod-garbage-collector",
        "pv-protection": "pv-protection-controller",
        "pvc-protection": "pvc-protection-controller",
        "replicaset": "replicaset-controller",
        "replicationcontroller": "replication-controller",
        "resourcequota": "resourcequota-controller",
        "root-ca-cert-publisher": "root-ca-cert-publisher",
        "route": "route-controller",
        "service": "service-controller",
        "serviceaccount": "service-account-controller",
        "serviceaccount-token": "tokens-controller",
        "statefulset": "statefulset-controller",
        "storage-version-gc": "storage-version-garbage-collector",
        "tokencleaner": "token-cleaner",
        "ttl": "ttl-controller",
        "ttl-after-finished": "ttl-after-finished-controller",
    }
)
"""kube-controller-manager's client name (and ServiceAccount) of each controller
(``ClientBuilder.ClientOrDie(...)`` in ``cmd/kube-controller-manager/app``)."""

ROOT_CONTROLLERS = frozenset({"serviceaccount-token"})
"""Controllers that always use kcm's own credentials: the tokens controller makes the tokens
the others would need (kube starts it on the root client builder)."""

NAMESPACE = "kube-system"
EXPIRATION_SECONDS = 3600
LEEWAY_PERCENT = 20
MIN_LIFETIME = 600.0
_BACKOFF = (0.5, 1.0, 2.0, 4.0)  # kube's wait.Backoff{500ms, x2, 4 steps}


def client_name(controller: str) -> str:
    """The client (and ServiceAccount) name of ``controller``; ``<name>-controller`` for one
    kube-controller-manager does not have."""
    return CLIENT_NAMES.get(controller, f"{controller}-controller")


def anonymous(config: Any) -> Any:
    """``config`` without credentials (kube's ``AnonymousClientConfig``): the server, its CA,
    TLS and proxy settings stay; the token source gives the bearer token."""
    return msgspec.structs.replace(
        config,
        token=None,
        token_file=None,
        username=None,
        password=None,
        exec=None,
        client_certificate=None,
        client_certificate_data=None,
        client_key=None,
        client_key_data=None,
    )


class ServiceAccountTokens:
    """Per-controller ServiceAccount tokens, made with ``root`` (kcm's own client).

    Guarantees:
        One TokenRequest at a time per account; a token is reused until 80% of its lifetime
        has passed (``force`` asks for a new one at once).
    """

    def __init__(self, root: Any, *, namespace: str = NAMESPACE) -> None:
        self._root = root
        self._namespace = namespace
        self._clock = root.clock
        self._cache: dict[str, tuple[str, float]] = {}
        self._locks: dict[str, anyio.Lock] = {}

    def source(self, account: str) -> TokenSource:
        """The token source of ServiceAccount ``account`` (in kube-system)."""

        async def token(force: bool) -> str:
            return await self.token(account, force=force)

        return token

    async def token(self, account: str, *, force: bool = False) -> str:
        """A valid token of ``account``.

        Raises:
            KcmError: the account could not be created or no token obtained after kube's
                four tries (the last error).
        """
        lock = self._locks.setdefault(account, anyio.Lock())
        cached = self._cache.get(account)
        async with lock:
            current = self._cache.get(account)
            if current is not None and current is not cached:  # refreshed while we waited
                return current[0]
            if current is not None and not force and self._clock.monotonic() < current[1]:
                return current[0]
            token, lifetime = await self._request(account)
            leeway = lifetime * LEEWAY_PERCENT / 100
            self._cache[account] = (token, self._clock.monotonic() + lifetime - leeway)
            return token

    async def _request(self, account: str) -> tuple[str, float]:
        error: KcmError | None = None
        for delay in (*_BACKOFF, None):
            try:
                await self._ensure_account(account)
                return await self._token_request(account)
            except KcmError as exc:
                error = exc
                logger.warning("token for %s/%s failed: %s", self._namespace, account, exc)
            if delay is not None:
                await self._clock.sleep(delay)
        raise KcmError(f"failed to get token for {self._namespace}/{account}: {error}")

    async def _ensure_account(self, account: str) -> None:
        accounts = self._root.api(ServiceAccount, namespace=self._namespace)
        try:
            await accounts.get(account)
        except NotFound:
            try:
                await accounts.create(ServiceAccount(metadata=ObjectMeta(name=account)))
            except AlreadyExists:
                pass

    async def _token_request(self, account: str) -> tuple[str, float]:
        response = await self._root.request(
            "POST",
            f"/api/v1/namespaces/{self._namespace}/serviceaccounts/{account}/token",
            json={
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                "spec": {"expirationSeconds": EXPIRATION_SECONDS},
            },
        )
        status = msgspec.json.decode(response.content).get("status") or {}
        token = status.get("token")
        if not token:
            raise KcmError(f"the TokenRequest for {self._namespace}/{account} has no token")
        lifetime = float(EXPIRATION_SECONDS)
        if expires := status.get("expirationTimestamp"):
            expiry = datetime.fromisoformat(str(expires).replace("Z", "+00:00"))
            lifetime = (expiry - self._clock.now()).total_seconds()
        return token, max(lifetime, MIN_LIFETIME)
