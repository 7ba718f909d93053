"""The namespace controller: empties a terminating namespace, then finalizes it.

kube-controller-manager's ``namespace`` controller (``NamespacedResourcesDeleter``). A namespace
with a deletionTimestamp is synced 5 s after it is seen (and every resync, 5 min): discover
every namespaced resource (CRDs included), delete each collection, list what remains, write the
five ``NamespaceDeletion*`` / ``Namespace*Remaining`` conditions, and once nothing remains
remove the ``kubernetes`` finalizer through ``/finalize``; the API server then deletes it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, final

import anyio
from anyio.abc import TaskStatus
from prometheus_client import CollectorRegistry

from kcm.client import ApiClient, server_preferred_resources
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.errors import ApiError, Conflict, MethodNotAllowed, NotFound
from kcm.informers import SharedInformerFactory
from kcm.models import PartialObjectMetadata, ResourceInfo, format_time, to_dict
from kcm.models.core_v1 import Namespace, Pod
from kcm.record import EventRecorder
from kcm.runtime import Controller, ReconcileFunc, Result
from kcm.workqueue import BucketRateLimiter, ItemExponentialFailureRateLimiter, MaxOfRateLimiter

__all__ = [
    "CONDITION_TYPES",
    "FINALIZER_ESTIMATE_SECONDS",
    "NamespaceController",
    "ResourcesRemainingError",
]

logger = logging.getLogger(__name__)

FINALIZER_ESTIMATE_SECONDS = 15
"""Estimate when remaining content has finalizers (kube's ``finalizerEstimateSeconds``)."""

_RESOURCE_CONCURRENCY = 8
"""Resources emptied at once (kube visits them one by one; the order never matters)."""

_DISCOVERY = "NamespaceDeletionDiscoveryFailure"
_PARSING = "NamespaceDeletionGroupVersionParsingFailure"
_CONTENT = "NamespaceDeletionContentFailure"
_REMAINING = "NamespaceContentRemaining"
_FINALIZERS = "NamespaceFinalizersRemaining"

CONDITION_TYPES = (_DISCOVERY, _PARSING, _CONTENT, _REMAINING, _FINALIZERS)
"""The five conditions a terminating namespace always carries, in kube's order."""

_SUCCESS: dict[str, tuple[str, str]] = {
    _DISCOVERY: ("ResourcesDiscovered", "All resources successfully discovered"),
    _PARSING: ("ParsedGroupVersions", "All legacy kube types successfully parsed"),
    _CONTENT: (
        "ContentDeleted",
        "All content successfully deleted, may be waiting on finalization",
    ),
    _REMAINING: ("ContentRemoved", "All content successfully removed"),
    _FINALIZERS: ("ContentHasNoFinalizers", "All content-preserving finalizers finished"),
}
_FAILURE_REASON = {
    _DISCOVERY: "DiscoveryFailed",
    _PARSING: "GroupVersionParsingFailed",
    _CONTENT: "ContentDeletionFailed",
    _REMAINING: "SomeResourcesRemain",
    _FINALIZERS: "SomeFinalizersRemain",
}


class ResourcesRemainingError(Exception):
    """Content remains; sync again in about ``estimate`` seconds."""

    def __init__(self, estimate: float) -> None:
        super().__init__(f"some content remains; estimate {estimate} s")
        self.estimate = estimate


@dataclass
class _Outcome:
    estimate: int = 0
    discovery_errors: list[str] = field(default_factory=list)
    content_errors: list[str] = field(default_factory=list)
    remaining: dict[str, int] = field(default_factory=dict)
    finalizers: dict[str, int] = field(default_factory=dict)

    def failures(self) -> dict[str, str]:
        out: dict[str, str] = {}
        if self.discovery_errors:
            errs = sorted(self.discovery_errors)
            out[_DISCOVERY] = (
                f"Discovery failed for some groups, {len(errs)} failing: {', '.join(errs)}"
            )
        if self.content_errors:
            errs = sorted(self.content_errors)
            out[_CONTENT] = (
                f"Failed to delete all resource types, {len(errs)} remaining: {', '.join(errs)}"
            )
        if self.remaining:
            parts = sorted(f"{r} has {n} resource instances" for r, n in self.remaining.items())
            out[_REMAINING] = f"Some resources are remaining: {', '.join(parts)}"
        if self.finalizers:
            parts = sorted(f"{f} in {n} resource instances" for f, n in self.finalizers.items())
            out[_FINALIZERS] = (
                f"Some content in the namespace has finalizers remaining: {', '.join(parts)}"
            )
        return out


@final
class NamespaceController:
    """Deletes everything in terminating namespaces, then removes the ``kubernetes`` finalizer.

    Args:
        client: the API client (live reads, deletes, status and ``/finalize`` writes).
        factory: the shared informer factory (the Namespace informer).
        recorder: event sink (unused today; kube's controller emits no events either).
        clock: time for the queue delays, backoff and condition timestamps.
        workers: concurrent namespace syncs (``--concurrent-namespace-syncs``, 10).
        registry: Prometheus registry for the controller and workqueue metrics.
        resync_period: re-examine every namespace this often (``--namespace-sync-period``).
        deletion_grace: delay before a newly seen terminating namespace is synced (kube: 5 s).
        finalizer: the finalizer token this controller owns.

    Guarantees:
        * A namespace without a deletionTimestamp is never written to.
        * Only ``finalizer`` is removed from ``spec.finalizers``; other tokens stay, so the
          namespace remains Terminating until their owners remove them.
        * Every sync writes the five conditions (only when something changed) before deciding.
    """

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        recorder: EventRecorder,
        clock: Clock = SYSTEM_CLOCK,
        workers: int = 10,
        registry: CollectorRegistry | None = None,
        resync_period: float = 300.0,
        deletion_grace: float = 5.0,
        finalizer: str = "kubernetes",
    ) -> None:
        self._client = client
        self._recorder = recorder
        self._clock = clock
        self._grace = deletion_grace
        self._finalizer = finalizer
        self.controller: Controller[str] = Controller(
            "namespace",
            ReconcileFunc(self.sync),
            max_concurrent_reconciles=workers,
            rate_limiter=MaxOfRateLimiter(
                ItemExponentialFailureRateLimiter(0.005, 60.0, clock=clock),
                BucketRateLimiter(10.0, 100, clock=clock),
            ),
            clock=clock,
            metrics=registry,
        )
        informer = factory.informer_for(Namespace)
        self._registration = informer.add_event_handler(
            on_add=self._seen, on_update=self._updated, resync_period=resync_period
        )
        self.controller.wait_for([self._registration])

    def __repr__(self) -> str:
        return f"<NamespaceController workers={self.controller.max_concurrent_reconciles}>"

    def _seen(self, ns: Namespace) -> None:
        if ns.metadata.deletion_timestamp is not None and ns.metadata.name:
            self.controller.queue.add_after(ns.metadata.name, self._grace)

    def _updated(self, old: Namespace, new: Namespace) -> None:
        self._seen(new)

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Run the workers until cancelled (started once the namespace cache has synced)."""
        try:
            await self.controller.run(task_status=task_status)
        finally:
            self._registration.remove()

    # -- sync --------------------------------------------------------------------------------

    async def sync(self, name: str) -> Result:
        """One pass over namespace ``name`` (the reconcile function)."""
        try:
            await self._delete(name)
        except ResourcesRemainingError as exc:
            return Result(requeue_after=exc.estimate / 2 + 1)
        return Result()

    async def _delete(self, name: str) -> None:
        api = self._client.api(Namespace)
        try:
            ns = await api.get(name)
        except NotFound:
            return
        if ns.metadata.deletion_timestamp is None:
            return
        if (ns.status.phase if ns.status else None) != "Terminating":
            ns = await api.patch_status(name, {"status": {"phase": "Terminating"}})
        if self._finalizer not in ((ns.spec.finalizers if ns.spec else None) or ()):
            return
        outcome = await self._delete_all_content(ns)
        await self._write_conditions(ns, outcome)
        if outcome.discovery_errors or outcome.content_errors:
            raise RuntimeError(
                f"namespace {name}: "
                + "; ".join(sorted(outcome.discovery_errors + outcome.content_errors))
            )
        if outcome.estimate > 0 or outcome.remaining:
            raise ResourcesRemainingError(max(outcome.estimate, 0))
        await self._finalize(name)

    async def _delete_all_content(self, ns: Namespace) -> _Outcome:
        outcome = _Outcome()
        found = await server_preferred_resources(self._client)
        outcome.discovery_errors.extend(f"{gv}: {err}" for gv, err in found.failed.items())
        resources = [r for r in found.resources if r.namespaced and "delete" in r.verbs]
        name = ns.metadata.name or ""
        deleted_at = ns.metadata.deletion_timestamp
        limiter = anyio.CapacityLimiter(_RESOURCE_CONCURRENCY)

        async def one(resource: ResourceInfo) -> None:
            async with limiter:
                try:
                    estimate = await self._delete_resource(resource, name, deleted_at, outcome)
                except ApiError as exc:
                    outcome.content_errors.append(f"{resource.plural}.{resource.group}: {exc}")
                    return
            outcome.estimate = max(outcome.estimate, estimate)

        async with anyio.create_task_group() as tg:
            for resource in resources:
                tg.start_soon(one, resource)
        return outcome

    async def _delete_resource(
        self, resource: ResourceInfo, namespace: str, deleted_at: datetime | None, outcome: _Outcome
    ) -> int:
        estimate = 0
        if resource.group == "" and resource.plural == "pods":
            estimate = await self._pod_estimate(namespace, deleted_at)
        api: Any = self._client.api(PartialObjectMetadata, namespace, resource=resource)
        if "deletecollection" in resource.verbs:
            try:
                await api.delete_collection(propagation_policy="Background")
            except (MethodNotAllowed, NotFound):
                await self._delete_each(api)
        elif "list" in resource.verbs:
            await self._delete_each(api)
        if "list" not in resource.verbs:
            return estimate
        items = (await api.list()).items
        if not items:
            return 0
        label = f"{resource.plural}.{resource.group}"
        outcome.remaining[label] = outcome.remaining.get(label, 0) + len(items)
        with_finalizers = 0
        for item in items:
            finalizers = item.metadata.finalizers or ()
            for f in finalizers:
                outcome.finalizers[f] = outcome.finalizers.get(f, 0) + 1
            with_finalizers += bool(finalizers)
        if estimate:
            return estimate
        if with_finalizers:
            return FINALIZER_ESTIMATE_SECONDS
        outcome.content_errors.append(
            f"unexpected items still remain in namespace: {namespace} for gvr: {label}"
        )
        return 0

    @staticmethod
    async def _delete_each(api: Any) -> None:
        """kube's ``deleteEachItem``: for a resource without ``deletecollection``."""
        for item in (await api.list()).items:
            try:
                await api.delete(item.metadata.name, propagation_policy="Background")
            except (NotFound, MethodNotAllowed):
                pass

    async def _pod_estimate(self, namespace: str, deleted_at: datetime | None) -> int:
        """The longest grace period among non-terminal pods, less the time since deletion."""
        estimate = 0
        for pod in (await self._client.api(Pod, namespace).list()).items:
            if pod.status and pod.status.phase in ("Succeeded", "Failed"):
                continue
            grace = pod.spec.termination_grace_period_seconds if pod.spec else None
            if grace is not None and grace > estimate:
                estimate = grace
        if estimate and deleted_at is not None:
            # clocks may disagree (a skewed server): never stretch the estimate
            elapsed = max(0.0, (self._clock.now() - deleted_at).total_seconds())
            estimate = max(0, int(estimate - elapsed))
        return estimate

    async def _write_conditions(self, ns: Namespace, outcome: _Outcome) -> None:
        failures = outcome.failures()
        current = {c.type: c for c in (ns.status.conditions if ns.status else None) or ()}
        now = format_time(self._clock.now())
        desired: list[dict[str, Any]] = []
        changed = False
        for ctype in CONDITION_TYPES:
            if ctype in failures:
                status, reason, message = "True", _FAILURE_REASON[ctype], failures[ctype]
            else:
                status, (reason, message) = "False", _SUCCESS[ctype]
            old = current.pop(ctype, None)
            if old is not None and old.status == status and old.last_transition_time:
                since = format_time(old.last_transition_time)
            else:
                since = now
            if old is None or (old.status, old.reason, old.message) != (status, reason, message):
                changed = True
            desired.append(
                {
                    "type": ctype,
                    "status": status,
                    "lastTransitionTime": since,
                    "reason": reason,
                    "message": message,
                }
            )
        desired.extend(to_dict(c) for c in current.values())  # conditions others own
        if changed:
            await self._client.api(Namespace).patch_status(
                ns.metadata.name or "", {"status": {"conditions": desired}}
            )

    async def _finalize(self, name: str) -> None:
        api = self._client.api(Namespace)
        for _ in range(5):
            try:
                ns = await api.get(name)
            except NotFound:
                return
            finalizers = list((ns.spec.finalizers if ns.spec else None) or ())
            if self._finalizer not in finalizers:
                return
            body = to_dict(ns)
            body.setdefault("spec", {})["finalizers"] = [
                f for f in finalizers if f != self._finalizer
            ]
            try:
                await self._client.request("PUT", f"/api/v1/namespaces/{name}/finalize", json=body)
                return
            except NotFound:
                return
            except Conflict:
                continue
        raise Conflict(f"namespace {name}: /finalize kept conflicting; will retry")
