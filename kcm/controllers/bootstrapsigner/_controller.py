"""The bootstrap signer: the ``cluster-info`` ConfigMap in ``kube-public`` carries a detached
JWS of its kubeconfig for every bootstrap token that may sign.

kube-controller-manager's ``bootstrapsigner`` (off by default). A joining node that knows a
bootstrap token reads ``cluster-info`` anonymously and trusts its CA once the signature of its
token matches. Any change of that ConfigMap or of a bootstrap token Secret in ``kube-system``
re-signs it; a write happens only when a signature is missing, wrong or stale. Conflicts and a
vanished ConfigMap are ignored (the next event brings it back), as kube does.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any, final

import msgspec

from kcm.controllerkit import (
    BOOTSTRAP_TOKEN_NAMESPACE,
    BOOTSTRAP_TOKEN_SECRET_TYPE,
    QueueController,
)
from kcm.errors import Conflict, NotFound
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey
from kcm.models.core_v1 import ConfigMap, Secret
from kcm.runtime import EnqueueMapped, Result

from ._signatures import signed_data, signing_tokens

__all__ = ["CLUSTER_INFO", "CLUSTER_INFO_NAMESPACE", "BootstrapSigner"]

logger = logging.getLogger(__name__)

CLUSTER_INFO = "cluster-info"
CLUSTER_INFO_NAMESPACE = "kube-public"
_KEY = ObjectKey(CLUSTER_INFO_NAMESPACE, CLUSTER_INFO)


def _cluster_info(cm: ConfigMap) -> Iterable[ObjectKey]:
    meta = cm.metadata
    return (_KEY,) if (meta.namespace, meta.name) == tuple(_KEY) else ()


def _token(secret: Secret) -> Iterable[ObjectKey]:
    token = secret.type == BOOTSTRAP_TOKEN_SECRET_TYPE
    return (_KEY,) if token and secret.metadata.namespace == BOOTSTRAP_TOKEN_NAMESPACE else ()


@final
class BootstrapSigner(QueueController):
    """Signs ``kube-public/cluster-info`` with the bootstrap tokens of the Secret informer.

    The clock is also ``now`` for token expiry. kube's signer emits no events, and one
    ConfigMap needs one worker whatever ``workers`` says.
    """

    fixed_workers = 1
    queue_name = "bootstrap_signer"

    def watch_informers(self, factory: SharedInformerFactory) -> None:
        config_maps = factory.informer_for(ConfigMap)
        self._config_maps = self.watch(config_maps, EnqueueMapped(_cluster_info), kind="ConfigMap")
        secrets = factory.informer_for(Secret)
        self._secrets = self.watch(secrets, EnqueueMapped(_token), kind="Secret")

    async def reconcile(self, request: ObjectKey) -> Result:
        """Re-sign ``cluster-info`` if any signature is missing, wrong or stale.

        Raises:
            KcmError: the write failed for a reason other than a conflict or NotFound.
        """
        cm = self._config_maps.get_or_none(CLUSTER_INFO_NAMESPACE, CLUSTER_INFO)
        if cm is None:
            return Result()
        secrets = self._secrets.namespace(BOOTSTRAP_TOKEN_NAMESPACE).list()
        tokens = signing_tokens(secrets, self._clock.now())
        data = signed_data(dict(cm.data or {}), tokens)
        if data is None:
            return Result()
        api: Any = self._client.api(ConfigMap, CLUSTER_INFO_NAMESPACE)
        try:
            await api.update(cm, msgspec.structs.replace(cm, data=data))
        except (Conflict, NotFound) as exc:
            logger.debug("cluster-info not re-signed: %s", exc)
        return Result()
