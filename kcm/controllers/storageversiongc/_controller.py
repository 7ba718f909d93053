"""The storage version garbage collector: StorageVersion entries of API servers that are gone
are removed, and a StorageVersion left without entries is deleted.

kube-controller-manager's ``storage-version-gc``. An API server is alive while its identity
Lease exists in ``kube-system`` with the label ``k8s.io/component=kube-apiserver``. A
StorageVersion is synced when it is added or updated with an entry of a server that is not
alive, and every StorageVersion naming a server is synced when that server's Lease is deleted.
The sync reads the StorageVersion and the Leases live, as kube does.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any, final

from kcm.controllerkit import EnqueueOn, QueueController
from kcm.errors import NotFound
from kcm.informers import SharedInformerFactory
from kcm.models import Lease, ObjectKey
from kcm.models.internal_v1alpha1 import StorageVersion
from kcm.runtime import Result

from ._versions import live_entries, with_entries

__all__ = ["IDENTITY_COMPONENT_LABEL", "StorageVersionGC"]

logger = logging.getLogger(__name__)

IDENTITY_COMPONENT_LABEL = "k8s.io/component"
"""The label of an API server's identity Lease (value ``kube-apiserver``)."""


def _is_identity(lease: Lease | None) -> bool:
    if lease is None:
        return False
    return (lease.metadata.labels or {}).get(IDENTITY_COMPONENT_LABEL) == "kube-apiserver"


@final
class StorageVersionGC(QueueController):
    """Removes the StorageVersion entries of API servers without an identity Lease.

    Leases and StorageVersions are watched, and read live when synced; the clock also stamps
    the conditions. kube's controller only logs and runs one worker per queue.
    """

    queue_name = "storage_version_garbage_collector"

    def watch_informers(self, factory: SharedInformerFactory) -> None:
        leases = factory.informer_for(Lease)
        self._leases = leases.lister()
        versions = factory.informer_for(StorageVersion)
        self._versions = self.watch(versions, EnqueueOn(self._if_stale, add=True, update=True))
        self.watch(leases, EnqueueOn(self._versions_of_gone_server, delete=True))

    def _live(self, server: str) -> bool:
        return _is_identity(self._leases.get_or_none("kube-system", server))

    def _if_stale(self, version: StorageVersion) -> Iterable[ObjectKey]:
        """A StorageVersion added or updated with an entry of a server that is not alive."""
        stale = live_entries(version, self._live) is not None
        return (ObjectKey("", version.metadata.name or ""),) if stale else ()

    def _versions_of_gone_server(self, lease: Lease) -> Iterable[ObjectKey]:
        """An identity Lease deleted: every StorageVersion with an entry of that server."""
        if lease.metadata.namespace != "kube-system" or not _is_identity(lease):
            return ()
        server = lease.metadata.name
        return [
            ObjectKey("", v.metadata.name or "")
            for v in self._versions.list()
            if any(
                e.api_server_id == server
                for e in (v.status.storage_versions if v.status else None) or ()
            )
        ]

    async def reconcile(self, request: ObjectKey) -> Result:
        """Drop StorageVersion ``request.name``'s entries of servers that are gone.

        Raises:
            KcmError: a read or write failed (retried with backoff).
        """
        api: Any = self._client.api(StorageVersion)
        try:
            version = await api.get(request.name)
        except NotFound:
            return Result()
        leases: Any = self._client.api(Lease, namespace="kube-system")
        live: dict[str, bool] = {}
        for entry in (version.status.storage_versions if version.status else None) or ():
            server = entry.api_server_id or ""
            if server not in live:
                try:
                    live[server] = _is_identity(await leases.get(server))
                except NotFound:
                    live[server] = False
        kept = live_entries(version, lambda server: live.get(server, False))
        if kept is None:
            return Result()
        try:
            if not kept:
                await api.delete(request.name)
                logger.info("deleted storage version %s: no API server left", request.name)
            else:
                updated = with_entries(version, kept, self._clock.now().replace(microsecond=0))
                await api.update(version, updated, subresource="status")
        except NotFound:
            pass
        return Result()
