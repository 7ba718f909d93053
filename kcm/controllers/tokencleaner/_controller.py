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

from kcm.controllerkit import (
    BOOTSTRAP_TOKEN_NAMESPACE,
    BOOTSTRAP_TOKEN_SECRET_TYPE,
    EnqueueOn,
    QueueController,
    bootstrap_token_expiration,
)
from kcm.errors import Conflict, NotFound
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey
from kcm.models.core_v1 import Secret
from kcm.runtime import Result

__all__ = ["TokenCleaner"]

logger = logging.getLogger(__name__)


def _token_key(secret: Secret) -> Iterable[ObjectKey]:
    meta = secret.metadata
    if secret.type == BOOTSTRAP_TOKEN_SECRET_TYPE and meta.namespace == BOOTSTRAP_TOKEN_NAMESPACE:
        return (ObjectKey(meta.namespace, meta.name or ""),)
    return ()


@final
class TokenCleaner(QueueController):
    """Deletes bootstrap token Secrets once they expire (with a uid precondition).

    The clock is also ``now`` for expiry: a token is checked again when it expires. kube's
    cleaner only logs, with one worker whatever ``workers`` says.
    """

    fixed_workers = 1
    queue_name = "token_cleaner"

    def watch_informers(self, factory: SharedInformerFactory) -> None:
        # kube's handlers: adds and updates queue the token; a deletion needs nothing
        tokens = EnqueueOn(_token_key, add=True, update=True)
        self._secrets = self.watch(factory.informer_for(Secret), tokens, kind="Secret")

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
