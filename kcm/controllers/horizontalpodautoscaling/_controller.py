"""The HorizontalPodAutoscaler controller (kube-controller-manager's
``horizontalpodautoscaling``, autoscaling/v2).

Every ``sync_period`` (``--horizontal-pod-autoscaler-sync-period``, 15 s) each HPA is
reconciled as kube's ``reconcileAutoscaler`` does: read the target's ``/scale``, compute a
replica count per metric (resource metrics from ``metrics.k8s.io``; pods, object and external
metrics need custom/external metrics APIs nobody serves here, so they fail as on a cluster
without an adapter), take the largest, stabilize and rate-limit it, clamp it to min/max, write
``/scale`` when it changed (``SuccessfulRescale``) and the status (conditions AbleToScale,
ScalingActive, ScalingLimited) when that changed.
"""

from __future__ import annotations

import copy
import logging
import math
from collections.abc import Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Unpack, final
from urllib.parse import quote

import anyio
from anyio.abc import TaskStatus

from kcm.client import ApiClient
from kcm.controllerkit import ControllerBase, ControllerOptions, error_text, log_failed_pass
from kcm.errors import ApiError
from kcm.informers import SharedInformerFactory
from kcm.models import (
    Unstructured,
    format_quantity,
    format_time,
    from_dict,
    parse_quantity,
    to_dict,
)
from kcm.models.autoscaling_v2 import HorizontalPodAutoscaler
from kcm.models.core_v1 import Pod
from kcm.selectors import LabelSelector, SelectorParseError
from kcm.workqueue import DelayingQueue

from ._normalize import History
from ._replicas import PodMetric, ReplicaCalculator, ReplicaError, ResourceProposal

__all__ = ["HorizontalController", "MetricsError"]

logger = logging.getLogger(__name__)

Obj = dict[str, Any]
_DEFAULT_METRIC: Obj = {
    "type": "Resource",
    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}},
}


_PASS = "pass"
"""The one key of the controller's queue: a pass over every HPA."""


class MetricsError(Exception):
    """The metrics API could not give a usable answer (kube's message)."""


class _Failed(Exception):
    """One HPA's reconcile stopped early (its status is already written)."""


@final
class HorizontalController(ControllerBase):
    """Scales targets of HorizontalPodAutoscalers by their metrics.

    Args:
        client: the API client (``/scale``, HPA status, metrics.k8s.io).
        factory: the shared informer factory (HPAs, pods).
        recorder: events on HPAs (component ``horizontal-pod-autoscaler``).
        clock: the clock the sync period, windows and timestamps run on.
        sync_period: seconds between reconciles of every HPA.
        downscale_stabilization: seconds of the downscale stabilization window.
        tolerance: the ratio within which no scaling happens.
        cpu_initialization_period, initial_readiness_delay: seconds (see the flags).

    Attributes:
        passes: completed passes over every HPA (tests wait on it).
        syncing: a pass is under way.
    """

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        sync_period: float = 15.0,
        downscale_stabilization: float = 300.0,
        tolerance: float = 0.1,
        cpu_initialization_period: float = 300.0,
        initial_readiness_delay: float = 30.0,
        **options: Unpack[ControllerOptions],
    ) -> None:
        super().__init__(client, **options)
        self.workers = self._workers  # accepted like every controller's; one pass loop runs
        self.sync_period = sync_period
        self.downscale_stabilization = downscale_stabilization
        self.calculator = ReplicaCalculator(
            tolerance,
            timedelta(seconds=cpu_initialization_period),
            timedelta(seconds=initial_readiness_delay),
        )
        self.hpa_informer = factory.informer_for(HorizontalPodAutoscaler)
        self.pod_informer = factory.informer_for(Pod)
        self._history: dict[str, History] = {}
        self.passes = 0
        self.syncing = False
        # the next pass as a delayed key of a named work queue: its due time is in the
        # kcm_workqueue_* metrics like every controller's requeues (what "idle" means to a
        # caller that reads them)
        self._passes: DelayingQueue[str] = DelayingQueue(
            name="horizontalpodautoscaler", clock=self.clock, metrics=self._registry
        )
        self._deadline = 0.0  # when the next pass is due (the sync-period beat)
        self._parked = False  # no pass queued: there was no HPA at the last one

    def __repr__(self) -> str:
        return f"<HorizontalController sync_period={self.sync_period} passes={self.passes}>"

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Wait for the caches, then reconcile every HPA each ``sync_period`` until
        cancelled."""
        self.hpa_informer.add_event_handler(on_add=self._on_hpa_added)
        await self.hpa_informer.wait_for_sync()
        await self.pod_informer.wait_for_sync()
        async with self._passes as passes:
            task_status.started()
            self._deadline = self._clock.monotonic()
            passes.add(_PASS)
            while True:
                key = await passes.get()
                try:
                    await self.sync_all()
                finally:
                    passes.done(key)
                self._deadline += self.sync_period
                now = self._clock.monotonic()
                if self._deadline < now:
                    self._deadline = now + self.sync_period
                if not self.hpa_informer.lister().list():
                    # Nothing to scale: no pass is due (so the queue metrics say idle) until
                    # an HPA is added, which puts the next pass back on the same beat.
                    self._parked = True
                    continue
                passes.add_after(_PASS, self._deadline - now)

    def _on_hpa_added(self, obj: object) -> None:
        if not self._parked:
            return
        self._parked = False
        now = self._clock.monotonic()
        while self._deadline < now:
            self._deadline += self.sync_period
        self._passes.add_after(_PASS, self._deadline - now)

    async def sync_all(self) -> None:
        """One reconcile of every HPA in the cache (HPAs that are gone lose their history)."""
        self.syncing = True
        try:
            await self._sync_all()
        finally:
            self.syncing = False
        self.passes += 1

    async def _sync_all(self) -> None:
        hpas = self.hpa_informer.lister().list()
        keys = {f"{h.metadata.namespace}/{h.metadata.name}" for h in hpas}
        for key in set(self._history) - keys:
            del self._history[key]
        for hpa in hpas:
            try:
                await self.reconcile(to_dict(hpa))
            except _Failed as exc:
                logger.info("horizontalpodautoscaling: %s", exc)
            except Exception as exc:
                log_failed_pass(logger, "horizontalpodautoscaling: reconcile", exc)

    # -- one HPA ---------------------------------------------------------------------------

    async def reconcile(self, hpa: Obj) -> None:
        """kube's ``reconcileAutoscaler`` for one HPA (``hpa`` is its JSON form)."""
        meta, spec = hpa["metadata"], hpa.get("spec") or {}
        ns, key = meta["namespace"], f"{meta['namespace']}/{meta['name']}"
        original = copy.deepcopy(hpa.get("status") or {})
        status: Obj = copy.deepcopy(original)
        status.setdefault("currentReplicas", 0)
        status.setdefault("desiredReplicas", 0)
        ref = spec.get("scaleTargetRef") or {}
        reference = f"{ref.get('kind')}/{ns}/{ref.get('name')}"
        try:
            info = await self._client.discover(ref.get("apiVersion", ""), ref.get("kind", ""))
            scale_api = self._client.api(Unstructured, ns, resource=info)
            scale = to_dict(await scale_api.get_scale(ref.get("name", "")))
        except ApiError as exc:
            self._event(hpa, "Warning", "FailedGetScale", error_text(exc))
            self._condition(
                status,
                "AbleToScale",
                "False",
                "FailedGetScale",
                "the HPA controller was unable to get the target's current scale: "
                + error_text(exc),
            )
            await self._write_status(hpa, original, status)
            raise _Failed(
                f"failed to query scale subresource for {reference}: {error_text(exc)}"
            ) from exc
        self._condition(
            status,
            "AbleToScale",
            "True",
            "SucceededGetScale",
            "the HPA controller was able to get the target's current scale",
        )
        current = int((scale.get("spec") or {}).get("replicas") or 0)
        now = self._clock.monotonic()
        history = self._history.setdefault(key, History(self.downscale_stabilization))
        history.record_initial(current, now)
        min_replicas = spec.get("minReplicas")
        min_replicas = 1 if min_replicas is None else int(min_replicas)
        max_replicas = int(spec.get("maxReplicas") or 0)
        behavior = spec.get("behavior")
        metric_statuses: list[Obj] | None = None
        desired, reason, rescale = 0, "", True
        if current == 0 and min_replicas != 0:
            rescale = False
            self._condition(
                status,
                "ScalingActive",
                "False",
                "ScalingDisabled",
                "scaling is disabled since the replica count of the target is zero",
            )
        elif current > max_replicas:
            reason, desired = "Current number of replicas above Spec.MaxReplicas", max_replicas
        elif current < min_replicas:
            reason, desired = "Current number of replicas below Spec.MinReplicas", min_replicas
        else:
            try:
                proposed, metric, metric_statuses = await self._for_metrics(hpa, scale, status)
            except _Failed as exc:
                status["currentReplicas"] = current
                await self._write_status(hpa, original, status)
                self._event(hpa, "Warning", "FailedComputeMetricsReplicas", str(exc))
                raise _Failed(
                    "failed to compute desired number of replicas based on listed metrics for "
                    f"{reference}: {exc}"
                ) from exc
            rescale_metric = ""
            if proposed > desired:
                desired, rescale_metric = proposed, metric
            if desired > current:
                reason = f"{rescale_metric} above target"
            if desired < current:
                reason = "All metrics below target"
            normalized = history.normalize(
                behavior, current, desired, min_replicas, max_replicas, now
            )
            self._condition(
                status, "AbleToScale", "True", normalized.able_reason, normalized.able_message
            )
            self._condition(
                status,
                "ScalingLimited",
                "True" if normalized.limited else "False",
                normalized.limited_reason,
                normalized.limited_message,
            )
            desired = normalized.replicas
            rescale = desired != current
        if rescale:
            try:
                await scale_api.patch_scale(ref.get("name", ""), {"spec": {"replicas": desired}})
            except ApiError as exc:
                self._event(
                    hpa,
                    "Warning",
                    "FailedRescale",
                    f"New size: {desired}; reason: {reason}; error: {error_text(exc)}",
                )
                self._condition(
                    status,
                    "AbleToScale",
                    "False",
                    "FailedUpdateScale",
                    f"the HPA controller was unable to update the target scale: {error_text(exc)}",
                )
                status["currentReplicas"] = current
                await self._write_status(hpa, original, status)
                raise _Failed(f"failed to rescale {reference}: {error_text(exc)}") from exc
            self._condition(
                status,
                "AbleToScale",
                "True",
                "SucceededRescale",
                f"the HPA controller was able to update the target scale to {desired}",
            )
            self._event(
                hpa, "Normal", "SuccessfulRescale", f"New size: {desired}; reason: {reason}"
            )
            history.record_scale(behavior, current, desired, now)
            status["lastScaleTime"] = format_time(self._clock.now())
        else:
            desired = current
        status["currentReplicas"], status["desiredReplicas"] = current, desired
        status["currentMetrics"] = metric_statuses or None  # Go writes null (not omitempty)
        await self._write_status(hpa, original, status)

    async def _for_metrics(self, hpa: Obj, scale: Obj, status: Obj) -> tuple[int, str, list[Obj]]:
        """kube's ``computeReplicasForMetrics``: the largest proposal of the valid metrics.

        Raises:
            _Failed: no selector, or too many metrics are invalid (the condition is set).
        """
        text = (scale.get("status") or {}).get("selector") or ""
        if not text:
            self._event(hpa, "Warning", "SelectorRequired", "selector is required")
            self._condition(
                status,
                "ScalingActive",
                "False",
                "InvalidSelector",
                "the HPA target's scale is missing a selector",
            )
            raise _Failed("selector is required")
        try:
            selector = LabelSelector.parse(text)
        except SelectorParseError as exc:
            message = (
                f"couldn't convert selector into a corresponding internal selector object: {exc}"
            )
            self._event(hpa, "Warning", "InvalidSelector", message)
            self._condition(status, "ScalingActive", "False", "InvalidSelector", message)
            raise _Failed(message) from exc
        spec_replicas = int((scale.get("spec") or {}).get("replicas") or 0)
        specs = (hpa.get("spec") or {}).get("metrics") or [_DEFAULT_METRIC]
        statuses: list[Obj] = [{"type": ""} for _ in specs]
        replicas, metric = 0, ""
        invalid = 0
        first: tuple[str, str, Exception] | None = None
        for i, spec in enumerate(specs):
            try:
                proposal, name, statuses[i] = await self._for_metric(
                    hpa, spec, spec_replicas, text, selector
                )
            except _MetricFailed as exc:
                invalid += 1
                if first is None:
                    first = (
                        exc.reason,
                        f"the HPA was unable to compute the replica count: {exc.cause}",
                        exc,
                    )
                continue
            if replicas == 0 or proposal > replicas:
                replicas, metric = proposal, name
        if first is not None and (invalid >= len(specs) or replicas < spec_replicas):
            self._condition(status, "ScalingActive", "False", first[0], first[1])
            counts = f"{invalid} invalid out of {len(specs)}"
            raise _Failed(f"invalid metrics ({counts}), first error is: {first[2]}")
        self._condition(
            status,
            "ScalingActive",
            "True",
            "ValidMetricFound",
            f"the HPA was able to successfully calculate a replica count from {metric}",
        )
        return replicas, metric, statuses

    async def _for_metric(
        self, hpa: Obj, spec: Obj, current: int, text: str, selector: LabelSelector
    ) -> tuple[int, str, Obj]:
        kind = spec.get("type", "")
        if kind not in ("Resource", "ContainerResource"):
            reason = {
                "Pods": "FailedGetPodsMetric",
                "Object": "FailedGetObjectMetric",
                "External": "FailedGetExternalMetric",
            }.get(kind, "InvalidMetricSourceType")
            what = {"Pods": "pods", "Object": "object", "External": "external"}.get(kind)
            cause = (
                f"unable to get metric: the server could not find the requested resource "
                f"({kind.lower()} metrics API not served)"
                if what
                else f'unknown metric source type "{kind}"'
            )
            self._event(hpa, "Warning", reason, cause)
            prefix = f"failed to get {what} metric value: " if what else ""
            raise _MetricFailed(reason, cause, prefix + cause)
        source = spec.get("resource" if kind == "Resource" else "containerResource") or {}
        resource, container = source.get("name", ""), source.get("container", "")
        target = source.get("target") or {}
        reason = (
            "FailedGetResourceMetric" if kind == "Resource" else "FailedGetContainerResourceMetric"
        )
        try:
            proposal, name = await self._resource_proposal(
                hpa, current, resource, container, target, text, selector
            )
        except (MetricsError, ReplicaError) as exc:
            cause = f"failed to get {resource} utilization: {exc}"
            self._event(hpa, "Warning", reason, cause)
            raise _MetricFailed(reason, cause, cause) from exc
        current_value: Obj = {}
        if proposal.utilization is not None:
            current_value["averageUtilization"] = proposal.utilization
        current_value["averageValue"] = format_quantity(Decimal(proposal.raw_average) / 1000)
        field = "resource" if kind == "Resource" else "containerResource"
        entry: Obj = {"name": resource}
        if container:
            entry["container"] = container
        entry["current"] = current_value
        return proposal.replicas, name, {"type": kind, field: entry}

    async def _resource_proposal(
        self,
        hpa: Obj,
        current: int,
        resource: str,
        container: str,
        target: Obj,
        text: str,
        selector: LabelSelector,
    ) -> tuple[ResourceProposal, str]:
        ns = hpa["metadata"]["namespace"]
        average = target.get("averageValue")
        utilization = target.get("averageUtilization")
        if average is None and utilization is None:
            raise ReplicaError(
                "invalid resource metric source: neither a utilization target nor a value "
                "target was set"
            )
        try:
            metrics = await self._pod_metrics(ns, text, resource, container)
        except MetricsError as exc:
            raise MetricsError(f"unable to get metrics for resource {resource}: {exc}") from exc
        pods = [
            to_dict(p)
            for p in self.pod_informer.lister().namespace(ns).list()
            if selector.matches(p.metadata.labels or {})
        ]
        if container:
            pods = [_only_container(p, container) for p in pods]
        now = self._clock.now()
        if average is not None:
            milli = _milli(average)
            proposal = self.calculator.value_replicas(current, milli, resource, pods, metrics, now)
            return proposal, f"{resource} resource"
        proposal = self.calculator.utilization_replicas(
            current, int(utilization or 0), resource, pods, metrics, now
        )
        return proposal, f"{resource} resource utilization (percentage of request)"

    async def _pod_metrics(
        self, ns: str, selector: str, resource: str, container: str
    ) -> dict[str, PodMetric]:
        """PodMetrics of the namespace's selected pods, summed over containers (or one)."""
        path = f"/apis/metrics.k8s.io/v1beta1/namespaces/{quote(ns)}/pods"
        try:
            response = await self._client.request("GET", path, params={"labelSelector": selector})
            items: Sequence[Obj] = response.json().get("items") or []
        except (ApiError, ValueError) as exc:
            raise MetricsError(
                f"unable to fetch metrics from resource metrics API: {error_text(exc)}"
            ) from exc
        if not items:
            raise MetricsError("no metrics returned from resource metrics API")
        out: dict[str, PodMetric] = {}
        for item in items:
            containers = item.get("containers") or []
            if container:
                containers = [c for c in containers if c.get("name") == container]
                if not containers:
                    raise MetricsError(
                        f"failed to get container metrics: container {container} not present "
                        f"in metrics for pod {ns}/{item['metadata']['name']}"
                    )
            values = [(c.get("usage") or {}).get(resource) for c in containers]
            if not values or any(not isinstance(v, str | int | float) for v in values):
                continue
            total = sum(_milli(str(v)) for v in values)
            out[item["metadata"]["name"]] = PodMetric(
                total, _parse_time(item.get("timestamp")), _parse_window(item.get("window"))
            )
        return out

    # -- status, conditions, events --------------------------------------------------------

    def _condition(self, status: Obj, kind: str, value: str, reason: str, message: str) -> None:
        """kube's ``setConditionInList``: the transition time moves only with the status."""
        conditions: list[Obj] = status.setdefault("conditions", [])
        existing = next((c for c in conditions if c.get("type") == kind), None)
        if existing is None:
            existing = {"type": kind}
            conditions.append(existing)
        if existing.get("status") != value:
            existing["lastTransitionTime"] = format_time(self._clock.now())
        existing.update(status=value, reason=reason, message=message)

    def _event(self, hpa: Obj, kind: str, reason: str, message: str) -> None:
        self._recorder.event(from_dict(HorizontalPodAutoscaler, hpa), kind, reason, message)

    async def _write_status(self, hpa: Obj, original: Obj, status: Obj) -> None:
        if status == original:
            return
        body = {**hpa, "status": status}
        try:
            await self._client.api(
                HorizontalPodAutoscaler, hpa["metadata"]["namespace"]
            ).replace_status(from_dict(HorizontalPodAutoscaler, body))
        except ApiError as exc:
            self._event(hpa, "Warning", "FailedUpdateStatus", error_text(exc))
            raise _Failed(
                f"failed to update status for {hpa['metadata']['name']}: {error_text(exc)}"
            ) from exc


class _MetricFailed(Exception):
    """One metric gave no proposal: the condition reason, the cause, and kube's error."""

    def __init__(self, reason: str, cause: str, error: str) -> None:
        super().__init__(error)
        self.reason = reason
        self.cause = cause


def _milli(quantity: str) -> int:
    """Go's ``Quantity.MilliValue`` (rounded up)."""
    return math.ceil(parse_quantity(quantity) * 1000)


def _only_container(pod: Obj, container: str) -> Obj:
    spec = dict(pod.get("spec") or {})
    spec["containers"] = [c for c in spec.get("containers") or () if c.get("name") == container]
    return {**pod, "spec": spec}


def _parse_time(value: object) -> datetime | None:
    if isinstance(value, str) and value:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    return None


def _parse_window(value: object) -> timedelta:
    if isinstance(value, str) and value.endswith("s"):
        try:
            return timedelta(seconds=float(value[:-1]))
        except ValueError:
            return timedelta(0)
    return timedelta(0)
