"""The ServiceAccount token controller: legacy token Secrets (kube's ``TokensController``).

Two queues, as kube's: ServiceAccounts and Secrets of type ``kubernetes.io/service-account-token``.

* A ServiceAccount that is gone has its token Secrets deleted (UID precondition).
* With ``auto_generate`` (Kubernetes up to 1.23, and 1.24 with the
  ``LegacyServiceAccountTokenNoAutoGeneration`` feature off) a ServiceAccount that references
  no token Secret gets one, ``<sa>-token-<5 chars>``, and a reference to it. Off by default, as
  in Kubernetes 1.24 and later.
* A token Secret that is gone is removed from its ServiceAccount's ``secrets``.
* A token Secret whose ServiceAccount is gone (also checked live) is deleted.
* Otherwise a token Secret gets what it lacks: ``token`` (a JWT, see :mod:`._jwt`),
  ``namespace``, ``ca.crt`` (also when it differs from the root CA) and both annotations.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple, TypeVar, final

import anyio
import msgspec
from anyio.abc import TaskStatus
from cachetools import TTLCache
from prometheus_client import CollectorRegistry

from kcm.client import ApiClient
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.controllerkit import is_namespace_terminating
from kcm.errors import Conflict, KcmError, NotFound
from kcm.informers import SharedInformerFactory, wait_for_cache_sync
from kcm.models import ObjectKey
from kcm.models.core_v1 import ObjectReference, Secret, ServiceAccount
from kcm.models.meta_v1 import ObjectMeta
from kcm.record import EventRecorder
from kcm.runtime import Controller, ReconcileFunc, Result
from kcm.workqueue import RateLimitingQueue, default_controller_rate_limiter

from ._jwt import TokenGenerator, legacy_claims

__all__ = [
    "MAX_RETRIES",
    "SECRET_TYPE",
    "SERVICE_ACCOUNT_NAME_KEY",
    "SERVICE_ACCOUNT_UID_KEY",
    "SecretKey",
    "ServiceAccountKey",
    "TokensController",
    "is_service_account_token",
]

logger = logging.getLogger(__name__)

SECRET_TYPE = "kubernetes.io/service-account-token"
SERVICE_ACCOUNT_NAME_KEY = "kubernetes.io/service-account.name"
SERVICE_ACCOUNT_UID_KEY = "kubernetes.io/service-account.uid"
MAX_RETRIES = 10
"""A key that failed this many times is dropped until its next event (kube's default)."""
_RECENT_WRITE_TTL = 60.0
"""How long a Secret this controller created is trusted over the cache (kube: 60 s)."""
_CONFLICT_RETRIES = 5
"""Adding a reference retries on conflict this often (client-go's ``DefaultRetry``)."""
_REMOVE_RETRIES = 10
"""Removing a reference retries on conflict this often (kube's ``RemoveTokenBackoff``)."""
K = TypeVar("K", "ServiceAccountKey", "SecretKey")
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_MAX_GENERATED_NAME = 63 - 5


class ServiceAccountKey(NamedTuple):
    """The ServiceAccount queue's key: enough to delete its tokens once it is gone."""

    namespace: str
    name: str
    uid: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


class SecretKey(NamedTuple):
    """The Secret queue's key: enough to remove the reference once the Secret is gone."""

    namespace: str
    name: str
    uid: str
    service_account: str
    service_account_uid: str
    """Empty for a Secret without the uid annotation (a user-made one, not filled in yet)."""

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


def is_service_account_token(secret: Secret, account: ServiceAccount) -> bool:
    """``secret`` is a token Secret for ``account``: the type, the name annotation, and the
    uid annotation when it has one (kube's ``IsServiceAccountToken``)."""
    if secret.type != SECRET_TYPE:
        return False
    annotations = secret.metadata.annotations or {}
    if annotations.get(SERVICE_ACCOUNT_NAME_KEY) != account.metadata.name:
        return False
    uid = annotations.get(SERVICE_ACCOUNT_UID_KEY)
    return not uid or uid == account.metadata.uid


def _sa_key(account: ServiceAccount) -> ServiceAccountKey | None:
    meta = account.metadata
    if not (meta.namespace and meta.name and meta.uid):
        return None
    return ServiceAccountKey(meta.namespace, meta.name, meta.uid)


def _secret_key(secret: Secret) -> SecretKey | None:
    meta = secret.metadata
    annotations = meta.annotations or {}
    name = annotations.get(SERVICE_ACCOUNT_NAME_KEY, "")
    if secret.type != SECRET_TYPE or not (meta.namespace and meta.name and meta.uid and name):
        return None
    return SecretKey(
        meta.namespace, meta.name, meta.uid, name, annotations.get(SERVICE_ACCOUNT_UID_KEY, "")
    )


def _references(account: ServiceAccount) -> set[str]:
    return {ref.name for ref in account.secrets or () if ref.name}


def _rv(obj: Secret) -> int:
    try:
        return int(obj.metadata.resource_version or 0)
    except ValueError:
        return 0


class _Requeue(Exception):
    """Try the key again with backoff, quietly (kube's ``retry = true`` without an error)."""


@final
class TokensController:
    """Keeps legacy ServiceAccount token Secrets filled in and consistent.

    Args:
        client: the API client Secrets and ServiceAccounts are written with.
        factory: where the ServiceAccount and Secret informers come from.
        token_generator: signs the tokens (:meth:`TokenGenerator.from_file` of
            ``--service-account-private-key-file``).
        root_ca: the PEM bundle put into ``ca.crt`` (``b""``: none is written).
        recorder: unused (kube's controller emits no events); the common signature.
        clock: the queues' backoff clock and the recent-writes expiry.
        workers: concurrent syncs per queue (``--concurrent-serviceaccount-token-syncs``, 5).
        registry: a Prometheus registry for the controller and queue metrics.
        auto_generate: create a token Secret for every ServiceAccount that references none
            (False, as Kubernetes 1.24+; True is 1.23's behaviour).
        rng: the source of generated Secret names (tests seed it).

    Guarantees:
        * A token Secret is only written from a fresh read that matches the cache (a stale
          cache skips the write; the Secret's update event brings it back).
        * Deletes carry the UID the decision was made on, so a re-created object of the same
          name is never deleted.
        * A failing key is retried with the default controller backoff, at most
          :data:`MAX_RETRIES` times, then dropped until its next event.
    """

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        token_generator: TokenGenerator,
        root_ca: bytes = b"",
        recorder: EventRecorder | None = None,
        clock: Clock = SYSTEM_CLOCK,
        workers: int = 5,
        registry: CollectorRegistry | None = None,
        auto_generate: bool = False,
        rng: random.Random | None = None,
    ) -> None:
        self._client = client
        self._tokens = token_generator
        self.root_ca = root_ca
        self.auto_generate = auto_generate
        self._rng = rng or random.SystemRandom()
        self._sa_informer = factory.informer_for(ServiceAccount)
        self._secret_informer = factory.informer_for(Secret)
        self._accounts = self._sa_informer.lister()
        self._secrets = self._secret_informer.lister()
        self._recent: TTLCache[ObjectKey, Secret] = TTLCache(
            maxsize=10_000, ttl=_RECENT_WRITE_TTL, timer=clock.monotonic
        )
        self.service_accounts: Controller[ServiceAccountKey] = Controller(
            "serviceaccount_tokens_service",
            ReconcileFunc(self._reconcile_account),
            max_concurrent_reconciles=workers,
            rate_limiter=default_controller_rate_limiter(clock=clock),
            clock=clock,
            metrics=registry,
        )
        self.secrets: Controller[SecretKey] = Controller(
            "serviceaccount_tokens_secret",
            ReconcileFunc(self._reconcile_secret),
            max_concurrent_reconciles=workers,
            rate_limiter=default_controller_rate_limiter(clock=clock),
            clock=clock,
            metrics=registry,
        )

    def __repr__(self) -> str:
        return f"<TokensController {self._tokens!r} auto_generate={self.auto_generate}>"

    @property
    def controllers(self) -> tuple[Controller[Any], ...]:
        """Both queues' controllers (ServiceAccounts, Secrets)."""
        return (self.service_accounts, self.secrets)

    # -- running -----------------------------------------------------------------------------

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Sync until cancelled; started once both caches have synced and every cached object
        has been queued."""
        await wait_for_cache_sync(self._sa_informer, self._secret_informer)
        async with anyio.create_task_group() as tg:
            await tg.start(self.service_accounts.run)
            await tg.start(self.secrets.run)
            registrations = [
                self._sa_informer.add_event_handler(
                    on_add=self._account_changed,
                    on_update=lambda old, new: self._account_changed(new),
                    on_delete=self._account_changed,
                ),
                self._secret_informer.add_event_handler(
                    on_add=self._secret_changed,
                    on_update=lambda old, new: self._secret_changed(new),
                    on_delete=self._secret_deleted,
                ),
            ]
            try:
                await wait_for_cache_sync(*registrations)
                task_status.started()
                await anyio.sleep_forever()
            finally:
                for registration in registrations:
                    registration.remove()

    def _account_changed(self, account: ServiceAccount) -> None:
        key = _sa_key(account)
        if key is not None:
            self.service_accounts.enqueue(key)

    def _secret_changed(self, secret: Secret) -> None:
        key = _secret_key(secret)
        if key is not None:
            self.secrets.enqueue(key)

    def _secret_deleted(self, secret: Secret) -> None:
        recent = self._recent.get(_object_key(secret))
        if recent is not None and recent.metadata.uid == secret.metadata.uid:
            del self._recent[_object_key(secret)]
        self._secret_changed(secret)

    async def _reconcile_account(self, key: ServiceAccountKey) -> Result:
        return await _retry_or_forget(self.service_accounts.queue, key, self.sync_service_account)

    async def _reconcile_secret(self, key: SecretKey) -> Result:
        return await _retry_or_forget(self.secrets.queue, key, self.sync_secret)

    # -- the cache, with this controller's own recent creates --------------------------------

    def _cached_secret(self, namespace: str, name: str) -> Secret | None:
        cached = self._secrets.get_or_none(namespace, name)
        recent = self._recent.get(ObjectKey(namespace, name))
        if recent is None:
            return cached
        if cached is None or _rv(recent) > _rv(cached):
            return recent
        return cached

    def _namespace_secrets(self, namespace: str) -> list[Secret]:
        found = {_object_key(s): s for s in self._secrets.namespace(namespace).list()}
        for key, recent in list(self._recent.items()):
            if key.namespace != namespace:
                continue
            cached = found.get(key)
            if cached is None or _rv(recent) > _rv(cached):
                found[key] = recent
        return list(found.values())

    def token_secrets(self, account: ServiceAccount) -> list[Secret]:
        """The token Secrets of ``account`` in the cache (kube's ``listTokenSecrets``)."""
        return [
            secret
            for secret in self._namespace_secrets(account.metadata.namespace or "")
            if is_service_account_token(secret, account)
        ]

    def _has_referenced_token(self, account: ServiceAccount) -> bool:
        references = _references(account)
        return bool(references) and any(
            secret.metadata.name in references for secret in self.token_secrets(account)
        )

    async def _service_account(
        self, namespace: str, name: str, uid: str, *, live_on_miss: bool
    ) -> ServiceAccount | None:
        """The ServiceAccount of that name (and uid, if given) from the cache, or with
        ``live_on_miss`` from the API server; None if there is none."""
        account = self._accounts.get_or_none(namespace, name)
        if account is not None and (not uid or uid == account.metadata.uid):
            return account
        if not live_on_miss:
            return None
        try:
            account = await self._client.api(ServiceAccount, namespace).get(name)
        except NotFound:
            return None
        return account if not uid or uid == account.metadata.uid else None

    # -- the ServiceAccount queue ------------------------------------------------------------

    async def sync_service_account(self, key: ServiceAccountKey) -> None:
        """Delete the tokens of a ServiceAccount that is gone; with ``auto_generate``, make
        sure one that exists references a token.

        Raises:
            KcmError: a write failed and may succeed later (retried).
        """
        account = await self._service_account(key.namespace, key.name, key.uid, live_on_miss=False)
        if account is None:
            gone = ServiceAccount(
                metadata=ObjectMeta(namespace=key.namespace, name=key.name, uid=key.uid)
            )
            await self._delete_tokens(gone)
        elif self.auto_generate:
            await self._ensure_referenced_token(account)

    async def _delete_tokens(self, account: ServiceAccount) -> None:
        errors: list[Exception] = []
        for secret in self.token_secrets(account):
            try:
                await self._delete_token(
                    secret.metadata.namespace or "", secret.metadata.name or "", secret.metadata.uid
                )
            except KcmError as exc:
                errors.append(exc)
        if errors:
            raise errors[0] if len(errors) == 1 else ExceptionGroup("deleting tokens", errors)

    async def _delete_token(self, namespace: str, name: str, uid: str | None) -> None:
        """Delete a token Secret (that incarnation only); NotFound and a failed uid
        precondition (Conflict) are done, as kube's ``deleteToken``."""
        try:
            await self._client.api(Secret, namespace).delete(
                name, preconditions={"uid": uid} if uid else None
            )
        except (NotFound, Conflict):
            pass

    async def _ensure_referenced_token(self, account: ServiceAccount) -> None:
        if self._has_referenced_token(account):
            return
        namespace, name = account.metadata.namespace or "", account.metadata.name or ""
        accounts = self._client.api(ServiceAccount, namespace)
        live = await accounts.get(name)  # NotFound: the cache or the read is stale; retried
        if live.metadata.resource_version != account.metadata.resource_version:
            raise _Requeue(f"ServiceAccount {namespace}/{name}: the cache is not up to date")
        secret_name = self.generate_name(f"{name}-token-")
        data = {
            "token": self._token(account, secret_name).encode(),
            "namespace": namespace.encode(),
        }
        if self.root_ca:
            data["ca.crt"] = self.root_ca
        secret = Secret(
            metadata=ObjectMeta(
                name=secret_name,
                namespace=namespace,
                annotations={
                    SERVICE_ACCOUNT_NAME_KEY: name,
                    SERVICE_ACCOUNT_UID_KEY: account.metadata.uid or "",
                },
            ),
            type=SECRET_TYPE,
            data=data,
        )
        try:
            created = await self._client.api(Secret, namespace).create(secret)
        except Exception as exc:
            if is_namespace_terminating(exc):
                logger.info("not creating a token for %s/%s: %s", namespace, name, exc)
                return
            raise
        self._recent[ObjectKey(namespace, secret_name)] = created
        added, error = await self._add_reference(accounts, account, live, secret_name)
        if not added:
            logger.info(
                "deleting secret %s/%s because the reference could not be added (%s)",
                namespace,
                secret_name,
                error,
            )
            try:
                await self._delete_token(namespace, secret_name, created.metadata.uid)
            except KcmError as exc:
                logger.error("deleting secret %s/%s: %s", namespace, secret_name, exc)
        if error is not None and not isinstance(error, (Conflict, NotFound)):
            raise error

    async def _add_reference(
        self, api: Any, account: ServiceAccount, live: ServiceAccount | None, secret_name: str
    ) -> tuple[bool, Exception | None]:
        """Append ``secret_name`` to the live ServiceAccount's ``secrets``, re-reading it on
        each conflict. Returns whether it was added, and the last error."""
        error: Exception | None = None
        for _ in range(_CONFLICT_RETRIES):
            try:
                if live is None:
                    live = await api.get(account.metadata.name)
                    assert live is not None
                    if live.metadata.uid != account.metadata.uid:
                        return False, None  # another ServiceAccount of that name
                    if self._has_referenced_token(live):
                        return False, None
                secrets = [*(live.secrets or ()), ObjectReference(name=secret_name)]
                await api.update(live, msgspec.structs.replace(live, secrets=secrets))
                return True, None
            except Conflict as exc:
                error, live = exc, None
            except KcmError as exc:
                return False, exc
        return False, error

    # -- the Secret queue --------------------------------------------------------------------

    async def sync_secret(self, key: SecretKey) -> None:
        """Remove a gone Secret's reference, delete a Secret whose ServiceAccount is gone, or
        fill in what a Secret lacks.

        Raises:
            KcmError: a read or write failed and may succeed later (retried).
        """
        secret = self._cached_secret(key.namespace, key.name)
        if secret is not None and secret.metadata.uid != key.uid:
            secret = None
        if secret is None:
            account = await self._service_account(
                key.namespace, key.service_account, key.service_account_uid, live_on_miss=False
            )
            if account is not None:
                try:
                    await self._remove_reference(key)
                except KcmError as exc:  # kube logs it and does not retry
                    logger.error("removing the reference to secret %s: %s", key, exc)
            return
        account = await self._service_account(
            key.namespace, key.service_account, key.service_account_uid, live_on_miss=True
        )
        if account is None:
            await self._delete_token(key.namespace, key.name, key.uid)
            return
        await self._fill_in(account, secret)

    def _needs(self, secret: Secret) -> tuple[bool, bool, bool]:
        """(ca.crt, namespace, token) to be (re)written (kube's ``secretUpdateNeeded``)."""
        data = secret.data or {}
        needs_ca = bool(self.root_ca) and bytes(data.get("ca.crt") or b"") != self.root_ca
        return needs_ca, not data.get("namespace"), not data.get("token")

    async def _fill_in(self, account: ServiceAccount, cached: Secret) -> None:
        if not any(self._needs(cached)):
            return
        namespace, name = cached.metadata.namespace or "", cached.metadata.name or ""
        api = self._client.api(Secret, namespace)
        try:
            live = await api.get(name)
        except NotFound:
            return
        if live.metadata.resource_version != cached.metadata.resource_version:
            # the update event brings it back
            logger.info(
                "secret %s/%s is not up to date, skipping token population", namespace, name
            )
            return
        needs_ca, needs_namespace, needs_token = self._needs(live)
        if not (needs_ca or needs_namespace or needs_token):
            return
        data = dict(live.data or {})
        if needs_ca:
            data["ca.crt"] = self.root_ca
        if needs_namespace:
            data["namespace"] = namespace.encode()
        if needs_token:
            data["token"] = self._token(account, name).encode()
        annotations = {
            **(live.metadata.annotations or {}),
            SERVICE_ACCOUNT_NAME_KEY: account.metadata.name or "",
            SERVICE_ACCOUNT_UID_KEY: account.metadata.uid or "",
        }
        wanted = msgspec.structs.replace(
            live,
            metadata=msgspec.structs.replace(live.metadata, annotations=annotations),
            data=data,
        )
        try:
            await api.update(live, wanted)
        except (Conflict, NotFound):
            pass  # changed or gone meanwhile: its own event brings it back

    async def _remove_reference(self, key: SecretKey) -> None:
        api = self._client.api(ServiceAccount, key.namespace)
        for attempt in range(_REMOVE_RETRIES):
            try:
                account = await api.get(key.service_account)
            except NotFound:
                return
            if key.service_account_uid and key.service_account_uid != account.metadata.uid:
                return
            if key.name not in _references(account):
                return
            secrets = [ref for ref in account.secrets or () if ref.name != key.name]
            try:
                await api.update(account, msgspec.structs.replace(account, secrets=secrets))
                return
            except NotFound:
                return
            except Conflict:
                if attempt == _REMOVE_RETRIES - 1:
                    raise

    # -- tokens and names --------------------------------------------------------------------

    def _token(self, account: ServiceAccount, secret_name: str) -> str:
        return self._tokens.token(
            legacy_claims(
                account.metadata.namespace or "",
                account.metadata.name or "",
                account.metadata.uid or "",
                secret_name,
            )
        )

    def generate_name(self, base: str) -> str:
        """``base`` (cut to 58 characters) and 5 random characters, as the API server's
        ``generateName`` (kube names token Secrets client-side)."""
        suffix = "".join(self._rng.choice(_NAME_ALPHABET) for _ in range(5))
        return base[:_MAX_GENERATED_NAME] + suffix


async def _retry_or_forget(
    queue: RateLimitingQueue[K], key: K, sync: Callable[[K], Awaitable[None]]
) -> Result:
    """Run ``sync(key)``: ``_Requeue`` retries quietly, an error is raised (logged, retried
    with backoff), but after :data:`MAX_RETRIES` failures the key is dropped until its next
    event (kube's ``retryOrForget``)."""
    try:
        await sync(key)
    except Exception as exc:
        if queue.num_requeues(key) >= MAX_RETRIES:
            logger.info("retried %d times: %s (%s); dropping it", MAX_RETRIES, key, exc)
            return Result()
        if isinstance(exc, _Requeue):
            return Result(requeue=True)
        raise
    return Result()


def _object_key(secret: Secret) -> ObjectKey:
    return ObjectKey(secret.metadata.namespace or "", secret.metadata.name or "")
