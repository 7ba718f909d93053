"""The ServiceAccount controller: the ``default`` ServiceAccount in every active namespace.

kube-controller-manager's ``serviceaccount`` controller (``ServiceAccountsController``). A
namespace is synced when it is added or updated and when a ServiceAccount in it is deleted; a
sync creates each ServiceAccount of :attr:`ServiceAccountsController.service_accounts` (kube:
only ``default``) that the cache lacks, in namespaces whose phase is ``Active``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import Unpack, final

from kcm.client import ApiClient
from kcm.controllerkit import (
    EnqueueOn,
    QueueController,
    QueueControllerOptions,
    is_namespace_terminating,
    namespace_keys,
)
from kcm.errors import AlreadyExists
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey
from kcm.models.core_v1 import Namespace, ServiceAccount
from kcm.models.meta_v1 import ObjectMeta
from kcm.runtime import Result

__all__ = ["DEFAULT_SERVICE_ACCOUNTS", "ServiceAccountsController"]

logger = logging.getLogger(__name__)

DEFAULT_SERVICE_ACCOUNTS = ("default",)
"""What every namespace gets (kube's ``DefaultServiceAccountsControllerOptions``)."""


def _namespace(ns: Namespace) -> Iterable[ObjectKey]:
    return (ObjectKey("", ns.metadata.name or ""),)


@final
class ServiceAccountsController(QueueController):
    """Makes sure every active namespace has its ServiceAccounts (kube: ``default``).

    Args:
        client: the API client ServiceAccounts are created with.
        factory: where the Namespace and ServiceAccount informers come from.
        service_accounts: the names every namespace gets.
        options: :class:`~kcm.controllerkit.QueueControllerOptions` (the recorder is unused:
            kube's controller emits no events; kube runs 1 worker and has no flag for it).

    Guarantees:
        * Nothing is created in a namespace whose phase is not ``Active`` (terminating, or
          not yet given a phase); a create refused because the namespace started terminating
          is dropped silently, as is AlreadyExists.
        * A deleted ServiceAccount of the list is created again.
    """

    queue_name = "serviceaccount"

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        service_accounts: Sequence[str] = DEFAULT_SERVICE_ACCOUNTS,
        **options: Unpack[QueueControllerOptions],
    ) -> None:
        self.service_accounts = tuple(service_accounts)
        super().__init__(client, factory, **options)

    def watch_informers(self, factory: SharedInformerFactory) -> None:
        namespaces = factory.informer_for(Namespace)
        accounts = factory.informer_for(ServiceAccount)
        # namespace adds and updates (resyncs included) sync that namespace; a deleted
        # ServiceAccount syncs its namespace (so ``default`` comes back)
        synced = EnqueueOn(_namespace, add=True, update=True)
        self._namespaces = self.watch(namespaces, synced, kind="Namespace")
        deleted = EnqueueOn(namespace_keys, delete=True)
        self._accounts = self.watch(accounts, deleted, kind="ServiceAccount")

    def __repr__(self) -> str:
        return f"<ServiceAccountsController accounts={list(self.service_accounts)}>"

    async def reconcile(self, request: ObjectKey) -> Result:
        """Create the missing ServiceAccounts of namespace ``request.name``.

        Raises:
            KcmError: a create failed (other than AlreadyExists or a terminating namespace);
                the namespace is retried with backoff after the other creates were tried.
        """
        name = request.name
        ns = self._namespaces.get_or_none(None, name)
        if ns is None or (ns.status.phase if ns.status else None) != "Active":
            return Result()
        api = self._client.api(ServiceAccount, name)
        errors: list[Exception] = []
        for account in self.service_accounts:
            if self._accounts.get_or_none(name, account) is not None:
                continue
            try:
                await api.create(ServiceAccount(metadata=ObjectMeta(name=account, namespace=name)))
            except AlreadyExists:
                pass
            except Exception as exc:
                if not is_namespace_terminating(exc):
                    errors.append(exc)
        if errors:
            raise errors[0] if len(errors) == 1 else ExceptionGroup(f"namespace {name}", errors)
        return Result()
