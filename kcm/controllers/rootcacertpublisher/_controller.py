"""The root CA publisher: a ``kube-root-ca.crt`` ConfigMap in every namespace.

kube-controller-manager's ``root-ca-cert-publisher`` (``rootcacertpublisher.Publisher``). Pods
read the cluster's CA bundle from it (the projected ``kube-api-access-*`` volume). A namespace
is synced when it is added or updated to ``Active``, and when its ``kube-root-ca.crt`` is
updated or deleted; a sync creates the ConfigMap, or puts back its ``ca.crt`` and its
``kubernetes.io/description`` annotation.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Unpack, final

import msgspec

from kcm.client import ApiClient
from kcm.controllerkit import (
    EnqueueOn,
    QueueController,
    QueueControllerOptions,
    is_namespace_terminating,
    namespace_keys,
)
from kcm.errors import NotFound
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey
from kcm.models.core_v1 import ConfigMap, Namespace
from kcm.models.meta_v1 import ObjectMeta
from kcm.runtime import Result

__all__ = [
    "DESCRIPTION",
    "DESCRIPTION_ANNOTATION",
    "ROOT_CA_CONFIG_MAP",
    "RootCACertPublisher",
]

logger = logging.getLogger(__name__)

ROOT_CA_CONFIG_MAP = "kube-root-ca.crt"
"""The ConfigMap's name (kube's ``RootCACertConfigMapName``); its key is ``ca.crt``."""
DESCRIPTION_ANNOTATION = "kubernetes.io/description"
DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal "
    "endpoints such as the internal service IP or kubernetes.default.svc. No other usage is "
    "guaranteed across distributions of Kubernetes clusters."
)
"""The annotation's text, kube's word for word."""
_KEY = "ca.crt"


class _NamespaceEvents:
    """Every added namespace; an updated one only while ``Active``."""

    def create_keys(self, obj: Namespace, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        return (ObjectKey("", obj.metadata.name or ""),)

    def update_keys(self, old: Namespace, new: Namespace) -> Iterable[ObjectKey]:
        if (new.status.phase if new.status else None) != "Active":
            return ()
        return (ObjectKey("", new.metadata.name or ""),)

    def delete_keys(self, obj: Namespace, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        return ()


@final
class RootCACertPublisher(QueueController):
    """Keeps ``kube-root-ca.crt`` (``ca.crt: <root_ca>``) in every namespace.

    Args:
        client: the API client ConfigMaps are written with.
        factory: where the Namespace and ConfigMap informers come from (the ConfigMap
            informer is field-selected to ``kube-root-ca.crt``).
        root_ca: the PEM bundle to publish (``b""`` publishes an empty ``ca.crt``, as kube
            does when it has no CA; see :func:`kcm.controllerkit.root_ca`).
        options: :class:`~kcm.controllerkit.QueueControllerOptions` (the recorder is unused:
            kube's publisher emits no events; kube runs 1 worker).

    Guarantees:
        * An edited ``ca.crt`` (or other data, or a removed description) is put back, a
          deleted ConfigMap is created again; labels and other annotations are kept.
        * A create refused because the namespace is gone or terminating is not retried.
    """

    queue_name = "root_ca_cert_publisher"

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        root_ca: bytes,
        **options: Unpack[QueueControllerOptions],
    ) -> None:
        self.root_ca = root_ca
        self._data = {_KEY: root_ca.decode()}
        super().__init__(client, factory, **options)

    def watch_informers(self, factory: SharedInformerFactory) -> None:
        self.watch(factory.informer_for(Namespace), _NamespaceEvents(), kind="Namespace")
        own = f"metadata.name={ROOT_CA_CONFIG_MAP}"
        config_maps = factory.informer_for(ConfigMap, field_selector=own)
        # an updated or deleted kube-root-ca.crt (the only ConfigMaps the informer holds)
        # syncs its namespace
        repaired = EnqueueOn(namespace_keys, update=True, delete=True)
        self._config_maps = self.watch(config_maps, repaired, kind="ConfigMap")

    def __repr__(self) -> str:
        return f"<RootCACertPublisher ca={len(self.root_ca)} bytes>"

    async def reconcile(self, request: ObjectKey) -> Result:
        """Create or repair ``kube-root-ca.crt`` in namespace ``request.name``.

        Raises:
            KcmError: the create or update failed; retried with backoff.
        """
        namespace = request.name
        api = self._client.api(ConfigMap, namespace)
        cm = self._config_maps.get_or_none(namespace, ROOT_CA_CONFIG_MAP)
        if cm is None:
            try:
                await api.create(
                    ConfigMap(
                        metadata=ObjectMeta(
                            name=ROOT_CA_CONFIG_MAP,
                            annotations={DESCRIPTION_ANNOTATION: DESCRIPTION},
                        ),
                        data=self._data,
                    )
                )
            except NotFound:
                pass  # the namespace is gone
            except Exception as exc:
                if not is_namespace_terminating(exc):
                    raise
            return Result()
        annotations = dict(cm.metadata.annotations or {})
        if dict(cm.data or {}) == self._data and annotations.get(DESCRIPTION_ANNOTATION):
            return Result()
        annotations[DESCRIPTION_ANNOTATION] = DESCRIPTION
        wanted = msgspec.structs.replace(
            cm,
            metadata=msgspec.structs.replace(cm.metadata, annotations=annotations),
            data=self._data,
        )
        await api.update(cm, wanted)
        return Result()
