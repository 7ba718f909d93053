"""The token cleaner: expired bootstrap token Secrets are deleted.

kube-controller-manager's ``tokencleaner`` (off by default). Each bootstrap token Secret in
``kube-system`` (type ``bootstrap.kubernetes.io/token``) is checked when it is added or
changed: one whose ``expiration`` has passed (or does not parse) is deleted with a uid
precondition; one that expires later is checked again then.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import final

import anyio
from anyio.abc import TaskStatus
from prometheus_client import CollectorRegistry

from kcm.client import ApiClient
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.controllerkit import (
    BOOTSTRAP_TOKEN_NAMESPACE,
    BOOTSTRAP_TOKEN_SECRET_TYPE,
    bootstrap_token_expiration,
)
from kcm.errors import Conflict, NotFound
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey
from kcm.models.core_v1 import Secret
from kcm.record import EventRecorder
from kcm.runtime import Controller, EnqueueMapped, Result
from kcm.workqueue import default_controller_rate_limiter

__all__ = ["TokenCleaner"]

logger = logging.getLogger(__name__)


def _token_key(secret: Secret) -> Iterable[ObjectKey]:
    meta = secret.metadata
    if secret.type == BOOTSTRAP_TOKEN_SECRET_TYPE and meta.namespace == BOOTSTRAP_TOKEN_NAMESPACE:
        return (ObjectKey(meta.namespace, meta.name or ""),)
    return ()


@final
class TokenCleaner:
    """Deletes bootstrap token Secrets once they expire.

    Args:
        client: the API client the deletes go through.
        factory: where the Secret informer comes from.
        recorder: unused (kube's cleaner only logs); the common signature.
        clock: ``now`` for expiry, and the queue's clock (a token is checked again when it
            expires).
        workers: accepted for the common signature; one worker, as kube.
        registry: a Prometheus registry for the controller and queue metrics.
    """

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        recorder: EventRecorder | None = None,
        clock: Clock = SYSTEM_CLOCK,
        workers: int = 1,
        registry: CollectorRegistry | None = None,
    ) -> None:
        self._client = client
        self._clock = clock
        informer = factory.informer_for(Secret)
        self._secrets = informer.lister()
        self.controller: Controller[ObjectKey] = Controller(
            "token_cleaner",
            self,
            max_concurrent_reconciles=1,
            rate_limiter=default_controller_rate_limiter(clock=clock),
            clock=clock,
            metrics=registry,
        )
        mapped: EnqueueMapped[Secret] = EnqueueMapped(_token_key)
        self.controller.watch(informer, _AddAndUpdate(mapped), kind="Secret")

    def __repr__(self) -> str:
        return "<TokenCleaner>"

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Clean expired tokens until cancelled (started once the cache synced)."""
        await self.controller.run(task_status=task_status)

    async def reconcile(self, request: ObjectKey) -> Result:
        """Delete token Secret ``request`` if it expired, else come back when it does.

        Raises:
            KcmError: the delete failed for a reason other than a conflict or NotFound.
        """
        secret = self._secrets.get_or_none(request.namespace, request.name)
        if secret is None or secret.type != BOOTSTRAP_TOKEN_SECRET_TYPE:
            return Result()
        left, expired = bootstrap_token_expiration(secret, self._clock.now())
        if not expired:
            return Result(requeue_after=left.total_seconds()) if left else Result()
        uid = secret.metadata.uid
        try:
            await self._client.api(Secret, request.namespace).delete(
                request.name, preconditions={"uid": uid} if uid else None
            )
        except (Conflict, NotFound):
            return Result()
        logger.info("deleted expired bootstrap token Secret %s/%s", *request)
        return Result()


class _AddAndUpdate:
    """kube's handlers: adds and updates queue the token; a deletion needs nothing."""

    def __init__(self, inner: EnqueueMapped[Secret]) -> None:
        self._inner = inner

    def create_keys(self, obj: Secret, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        return self._inner.create_keys(obj, is_in_initial_list=is_in_initial_list)

    def update_keys(self, old: Secret, new: Secret) -> Iterable[ObjectKey]:
        return _token_key(new)

    def delete_keys(self, obj: Secret, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        return ()
