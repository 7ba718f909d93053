"""The ResourceQuota controller: keeps each quota's ``status.hard`` and ``status.used``
(kube-controller-manager's ``resourcequota``).

It only counts; refusing what exceeds a quota, and charging a create into ``status.used``
at once, is the API server's ResourceQuota admission. A quota whose status lags its spec
(new, or ``spec.hard`` changed, or usage missing for a limited name) goes to a priority queue
with its own workers, everything else to the normal queue. Every quota is recalculated every
``resync_period`` (``--resource-quota-sync-period``); between those, usage is replenished
when an object is deleted, a pod stops counting (Succeeded, Failed, past its deletion grace)
or a Service changes type: the quotas of that namespace that limit the kind are recalculated.

Pods, Services and claims are read from typed informers; other counted kinds (ConfigMaps,
Secrets, ReplicationControllers, ResourceQuotas, and any ``count/<resource>.<group>`` a
quota names) from metadata-only informers, started when a quota first names the kind.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from functools import partial
from typing import Any, Unpack, final

import anyio
from anyio.abc import TaskStatus

from kcm.client import ApiClient, server_preferred_resources
from kcm.clock import move_on_after
from kcm.controllerkit import ControllerBase, ControllerOptions, run_every
from kcm.informers import SharedIndexInformer, SharedInformerFactory, strip_managed_fields
from kcm.models import (
    ObjectKey,
    ResourceInfo,
    from_dict,
    object_key,
    to_dict,
)
from kcm.models.core_v1 import (
    ConfigMap,
    PersistentVolumeClaim,
    Pod,
    ReplicationController,
    ResourceQuota,
    Secret,
    Service,
)
from kcm.quota import (
    calculate_usage,
    counts_against_quota,
    counts_for_quota,
    evaluator_for,
    evaluators_for_quota,
    next_status,
    quota_service_type,
)
from kcm.runtime import ReconcileFunc, Result

__all__ = ["DEFAULT_RESYNC_PERIOD", "ResourceQuotaController", "UsageNotReady"]

logger = logging.getLogger(__name__)

DEFAULT_RESYNC_PERIOD = 300.0
"""``--resource-quota-sync-period``'s default (5 minutes)."""

_FIRST_LIST_TIMEOUT = 10.0
"""How long a sync waits for a newly counted kind's first list before retrying later."""

_COUNTED: dict[tuple[str, str], tuple[type[Any], bool]] = {
    ("", "configmaps"): (ConfigMap, False),
    ("", "secrets"): (Secret, False),
    ("", "replicationcontrollers"): (ReplicationController, True),
    ("", "resourcequotas"): (ResourceQuota, True),
}
"""The other kinds counted from the start, and whether they are always watched whole: the
ReplicationController and ResourceQuota informers are shared with controllers that hold them
anyway (the RC manager and disruption; this one). ConfigMaps and Secrets, which may be
large, are counted from a whole-object informer another controller holds (the token
controller's Secrets), else from a metadata-only one: chosen when the controller starts,
once every controller has asked for its informers (:meth:`ResourceQuotaController.run`)."""


class UsageNotReady(Exception):
    """A kind a quota counts has not been listed yet (or cannot be found); retried."""


def _obj(item: Any) -> Any:
    return getattr(item, "obj", item)  # a tombstone's last known state


def _namespace(item: Any) -> str:
    return _obj(item).metadata.namespace or ""


@final
class ResourceQuotaController(ControllerBase):
    """Writes every ResourceQuota's ``status.hard`` and ``status.used``.

    Args:
        client: the API client (status writes, discovery of counted kinds).
        factory: the shared informer factory (quotas, pods, services, claims, and the
            metadata of every other counted kind).
        recorder: event sink (unused: kube's controller emits no events).
        clock: the clock the resync period, backoff and pod deletion grace run on.
        workers: workers per queue (``--concurrent-resource-quota-syncs``, 5).
        registry: Prometheus registry for the controllers' and queues' metrics.
        resync_period: ``--resource-quota-sync-period``: every quota is recalculated this
            often (0 disables it).

    Attributes:
        controller, priority: the normal and the priority (missing usage) queue's controllers.
    """

    default_workers = 5

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        resync_period: float = DEFAULT_RESYNC_PERIOD,
        **options: Unpack[ControllerOptions],
    ) -> None:
        super().__init__(client, **options)
        self._factory = factory
        self._resync = resync_period
        # Go's work queue names
        self.controller = self.new_controller("resourcequota_primary", ReconcileFunc(self.sync))
        self.priority = self.new_controller("resourcequota_priority", ReconcileFunc(self.sync))
        self.quota_informer = factory.informer_for(ResourceQuota)
        self._registration = self.quota_informer.add_event_handler(
            on_add=self._quota_added, on_update=self._quota_updated, on_delete=self._quota_deleted
        )
        self.controller.wait_for([self._registration], kind="ResourceQuota")
        self.pod_informer = factory.informer_for(Pod)
        self.service_informer = factory.informer_for(Service)
        self.claim_informer = factory.informer_for(PersistentVolumeClaim)
        self._informers: dict[tuple[str, str], SharedIndexInformer[Any]] = {
            ("", "pods"): self.pod_informer,
            ("", "services"): self.service_informer,
            ("", "persistentvolumeclaims"): self.claim_informer,
        }
        self._monitors = [
            self.pod_informer.add_event_handler(
                on_update=self._pod_updated, on_delete=self._deleted("pods")
            ),
            self.service_informer.add_event_handler(
                on_update=self._service_updated, on_delete=self._deleted("services")
            ),
            self.claim_informer.add_event_handler(
                on_delete=self._deleted("persistentvolumeclaims")
            ),
        ]
        for (group, resource), (model, whole) in _COUNTED.items():
            if whole:
                self._watch_counted(group, resource, factory.informer_for(model))
        self.controller.wait_for(list(self._monitors), kind="quota monitors")
        self._discovered: dict[tuple[str, str], ResourceInfo] = {}

    # -- events ------------------------------------------------------------------------------

    def _quota_added(self, quota: ResourceQuota) -> None:
        key = object_key(quota)
        if self._lags(to_dict(quota)):
            self.priority.enqueue(key)
        else:
            self.controller.enqueue(key)

    def _quota_updated(self, old: ResourceQuota, new: ResourceQuota) -> None:
        before, after = (to_dict(q).get("spec") or {} for q in (old, new))
        if (before.get("hard") or {}) != (after.get("hard") or {}):
            self._quota_added(new)

    def _quota_deleted(self, quota: Any) -> None:
        self.controller.enqueue(object_key(_obj(quota)))

    @staticmethod
    def _lags(quota: dict[str, Any]) -> bool:
        """Status behind spec: hard differs, or a limited name has no usage yet."""
        spec_hard = (quota.get("spec") or {}).get("hard") or {}
        status = quota.get("status") or {}
        hard = status.get("hard") or {}
        if hard != spec_hard:
            return True
        used = status.get("used") or {}
        missing = [name for name in hard if name not in used]
        return any(e.matching_resources(missing) for e in evaluators_for_quota(hard))

    def _pod_updated(self, old: Pod, new: Pod) -> None:
        now = self._clock.now()
        if counts_against_quota(old, now) and not counts_against_quota(new, now):
            self._replenish("", "pods", _namespace(new))

    def _service_updated(self, old: Service, new: Service) -> None:
        if quota_service_type(to_dict(old)) != quota_service_type(to_dict(new)):
            self._replenish("", "services", _namespace(new))

    def _deleted(self, resource: str, group: str = "") -> Any:
        def on_delete(item: Any) -> None:
            self._replenish(group, resource, _namespace(item))

        return on_delete

    def _watch_counted(self, group: str, resource: str, informer: SharedIndexInformer[Any]) -> None:
        self._informers[(group, resource)] = informer
        self._monitors.append(informer.add_event_handler(on_delete=self._deleted(resource, group)))

    def _replenish(self, group: str, resource: str, namespace: str) -> None:
        """Recalculate the namespace's quotas that limit this kind."""
        evaluator = evaluator_for(group, resource)
        if evaluator is None:
            return
        for quota in self.quota_informer.lister().namespace(namespace).list():
            hard = (quota.status.hard if quota.status else None) or {}
            if evaluator.matching_resources(hard):
                self.controller.enqueue(object_key(quota))

    def enqueue_all(self) -> None:
        """Queue every quota for a full recalculation (the periodic resync)."""
        for quota in self.quota_informer.lister().list():
            self.controller.enqueue(object_key(quota))

    # -- running -----------------------------------------------------------------------------

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Run both queues' workers and the periodic resync until cancelled."""
        for (group, resource), (model, whole) in _COUNTED.items():
            if not whole:
                self._watch_counted(group, resource, self._whole_or_metadata(model))
                self.controller.wait_for(self._monitors[-1:], kind=f"quota monitor {resource}")
        try:
            async with anyio.create_task_group() as tg:
                await tg.start(self.controller.run)
                await tg.start(self.priority.run)
                if self._resync > 0:
                    tg.start_soon(
                        partial(
                            run_every, self._clock, self._resync, self._resync_pass, at_once=False
                        )
                    )
                task_status.started()
        finally:
            self._registration.remove()
            for monitor in self._monitors:
                monitor.remove()

    def _whole_or_metadata(self, model: type[Any]) -> SharedIndexInformer[Any]:
        """The unfiltered whole-object informer of ``model`` another controller asked for,
        else a metadata-only one (one watch of the kind either way)."""
        for key, informer in self._factory.informers().items():
            if (
                key.model is model
                and not key.namespace
                and not key.label_selector
                and not key.field_selector
            ):
                return informer
        return self._factory.metadata_informer(model)

    async def _resync_pass(self) -> None:
        self.enqueue_all()

    # -- sync --------------------------------------------------------------------------------

    async def sync(self, key: ObjectKey) -> Result:
        """Recalculate one quota's usage and write its status if it changed."""
        quota = self.quota_informer.lister().get_or_none(key.namespace, key.name)
        if quota is None:
            return Result()
        body = to_dict(quota)
        hard = (body.get("spec") or {}).get("hard") or {}
        await self._ensure_counted(counts_for_quota(hard))
        namespace = key.namespace or ""

        def list_objects(group: str, resource: str) -> Iterable[Any] | None:
            informer = self._informers.get((group, resource))
            if informer is None:
                return None
            if not informer.has_synced:
                raise UsageNotReady(f"{resource}.{group} not yet synced")
            return [to_dict(o) for o in informer.lister().namespace(namespace).list()]

        status = next_status(body, calculate_usage(body, list_objects, self._clock.now()))
        if status is None:
            return Result()
        body["status"] = status
        await self._client.api(ResourceQuota, namespace).replace_status(
            from_dict(ResourceQuota, body)
        )
        return Result()

    async def _ensure_counted(self, kinds: Iterable[tuple[str, str]]) -> None:
        """Start a metadata informer for every counted kind not watched yet (discovery
        tells whether the kind is served; one that is not is left out of the usage)."""
        wanted = [k for k in kinds if k not in self._informers]
        if not wanted:
            return
        missing = [k for k in wanted if k not in self._discovered]
        if missing:
            found = await server_preferred_resources(self._client)
            for info in found.resources:
                if info.namespaced and "list" in info.verbs and "watch" in info.verbs:
                    self._discovered[(info.group, info.plural)] = info
        for group, resource in wanted:
            served = self._discovered.get((group, resource))
            if served is None:
                continue
            informer = self._factory.metadata_informer(served, transform=strip_managed_fields)
            self._watch_counted(group, resource, informer)
            async with move_on_after(self._clock, _FIRST_LIST_TIMEOUT):
                await informer.wait_for_sync()
