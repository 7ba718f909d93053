"""The ServiceAccount controller: the ``default`` ServiceAccount in every active namespace.

kube-controller-manager's ``serviceaccount`` controller (``ServiceAccountsController``). A
namespace is synced when it is added or updated and when a ServiceAccount in it is deleted; a
sync creates each ServiceAccount of :attr:`ServiceAccountsController.service_accounts` (kube:
only ``default``) that the cache lacks, in namespaces whose phase is ``Active``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import final

import anyio
from anyio.abc import TaskStatus
from prometheus_client import CollectorRegistry

from kcm.client import ApiClient
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.controllerkit import is_namespace_terminating
from kcm.errors import AlreadyExists
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey
from kcm.models.core_v1 import Namespace, ServiceAccount
from kcm.models.meta_v1 import ObjectMeta
from kcm.record import EventRecorder
from kcm.runtime import Controller, Result
from kcm.workqueue import default_controller_rate_limiter

__all__ = ["DEFAULT_SERVICE_ACCOUNTS", "ServiceAccountsController"]

logger = logging.getLogger(__name__)

DEFAULT_SERVICE_ACCOUNTS = ("default",)
"""What every namespace gets (kube's ``DefaultServiceAccountsControllerOptions``)."""


class _NamespaceEvents:
    """Namespace adds and updates (resyncs included) sync that namespace."""

    def create_keys(self, obj: Namespace, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        return (ObjectKey("", obj.metadata.name or ""),)

    def update_keys(self, old: Namespace, new: Namespace) -> Iterable[ObjectKey]:
        return (ObjectKey("", new.metadata.name or ""),)

    def delete_keys(self, obj: Namespace, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        return ()


class _ServiceAccountEvents:
    """A deleted ServiceAccount syncs its namespace (so ``default`` comes back)."""

    def create_keys(self, obj: ServiceAccount, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        return ()

    def update_keys(self, old: ServiceAccount, new: ServiceAccount) -> Iterable[ObjectKey]:
        return ()

    def delete_keys(self, obj: ServiceAccount, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        return (ObjectKey("", obj.metadata.namespace or ""),)


@final
class ServiceAccountsController:
    """Makes sure every active namespace has its ServiceAccounts (kube: ``default``).

    Args:
        client: the API client ServiceAccounts are created with.
        factory: where the Namespace and ServiceAccount informers come from.
        recorder: unused (kube's controller emits no events); the common signature.
        clock: the queue's backoff clock.
        workers: concurrent syncs (kube runs 1 and has no flag for it).
        registry: a Prometheus registry for the controller and queue metrics.
        service_accounts: the names every namespace gets.

    Guarantees:
        * Nothing is created in a namespace whose phase is not ``Active`` (terminating, or
          not yet given a phase); a create refused because the namespace started terminating
          is dropped silently, as is AlreadyExists.
        * A deleted ServiceAccount of the list is created again.
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
        service_accounts: Sequence[str] = DEFAULT_SERVICE_ACCOUNTS,
    ) -> None:
        self._client = client
        self.service_accounts = tuple(service_accounts)
        ns_informer = factory.informer_for(Namespace)
        sa_informer = factory.informer_for(ServiceAccount)
        self._namespaces = ns_informer.lister()
        self._accounts = sa_informer.lister()
        self.controller: Controller[ObjectKey] = Controller(
            "serviceaccount",
            self,
            max_concurrent_reconciles=workers,
            rate_limiter=default_controller_rate_limiter(clock=clock),
            clock=clock,
            metrics=registry,
        )
        self.controller.watch(ns_informer, _NamespaceEvents(), kind="Namespace")
        self.controller.watch(sa_informer, _ServiceAccountEvents(), kind="ServiceAccount")

    def __repr__(self) -> str:
        return f"<ServiceAccountsController accounts={list(self.service_accounts)}>"

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Sync namespaces until cancelled (started once both caches have synced)."""
        await self.controller.run(task_status=task_status)

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
