"""A kubelet player for the simulated nodes.

For every pod bound to a simulated node it walks the status a kubelet would write:

``Pending`` ─(pod_start_delay)→ ``Running`` ─(pod_ready_delay)→ ``Ready``
                                   └─(job_duration, restartPolicy Never/OnFailure)→ ``Succeeded``

A run-to-completion pod's containers exit after ``job_duration`` (annotation
``kcm.dev/simulate-duration``) with exit code 0 (annotation ``kcm.dev/simulate-exit-code``):
exit 0 gives ``Succeeded``, anything else ``Failed``, except with ``restartPolicy:
OnFailure``, where the containers restart in place (``restartCount`` + 1). Pods with
``restartPolicy: Always`` run until deleted. A pod with a ``deletionTimestamp`` is removed
at once (DELETE with grace period 0 and its UID as precondition), as a kubelet does once its
containers have stopped.

Delays are measured on the injected clock from when this process first saw the pod in its
current state, so a restart of kcm only restarts the pending timers.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

import anyio
import msgspec
from anyio.abc import TaskStatus
from prometheus_client import CollectorRegistry

from kcm.client import ApiClient
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.errors import Conflict, NotFound
from kcm.informers import SharedInformerFactory
from kcm.models import (
    ContainerState,
    ContainerStateRunning,
    ContainerStateTerminated,
    ContainerStatus,
    HostIP,
    Node,
    ObjectKey,
    Pod,
    PodCondition,
    PodIP,
    PodStatus,
)
from kcm.runtime import Controller, Request, Result, enqueue_mapped, enqueue_object

from ._config import (
    DURATION_ANNOTATION,
    EXIT_CODE_ANNOTATION,
    SIMULATED_LABEL,
    SimulationConfig,
    parse_duration,
)
from ._nodes import node_ip
from ._resources import TERMINAL_PHASES
from ._scheduler import EventRecorder, ensure_node_name_index, pods_on

__all__ = ["Kubelet"]

logger = logging.getLogger(__name__)


@dataclass
class _Seen:
    uid: str
    stage: str  # "pending" or "running"
    since: float  # clock.monotonic()


def _condition(kind: str, status: str, now: datetime, reason: str | None = None) -> PodCondition:
    return PodCondition(type=kind, status=status, last_transition_time=now, reason=reason)


class Kubelet:
    """Plays the kubelet of every simulated node (a Runnable; runtime controller
    ``sim-kubelet``).

    Args:
        client: the API client (status writes and final deletes).
        factory: the shared informer factory (pods and nodes; run it alongside).
        config: delays and durations (``pod_start_delay``, ``pod_ready_delay``,
            ``job_duration``, ``kubelet_workers``).
        clock: measures the delays and stamps the status.
        registry: Prometheus registry for the controller's metrics.
        recorder: receives ``Started`` / ``Killing`` pod events, if given.
    """

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        config: SimulationConfig | None = None,
        clock: Clock = SYSTEM_CLOCK,
        registry: CollectorRegistry | None = None,
        recorder: EventRecorder | None = None,
    ) -> None:
        self._client = client
        self._config = config if config is not None else SimulationConfig()
        self._clock = clock
        self._recorder = recorder
        self._seen: dict[ObjectKey, _Seen] = {}
        self._ips: dict[str, int] = {}
        self._warned: set[tuple[str, str]] = set()
        pods = factory.informer_for(Pod)
        ensure_node_name_index(pods)
        nodes = factory.informer_for(Node)
        self._pods = pods.lister()
        self._nodes = nodes.lister()
        self.controller: Controller[ObjectKey] = Controller(
            "sim-kubelet",
            self,
            max_concurrent_reconciles=self._config.kubelet_workers,
            clock=clock,
            metrics=registry,
        )
        self.controller.watch(pods, enqueue_object())
        self.controller.watch(
            nodes, enqueue_mapped(lambda node: pods_on(self._pods, node.metadata.name or ""))
        )

    def _our_node(self, name: str) -> tuple[int, Node] | None:
        node = self._nodes.get_or_none(None, name)
        if node is None or (node.metadata.labels or {}).get(SIMULATED_LABEL) != "true":
            return None
        try:
            index = int(name.removeprefix(self._config.node_prefix))
        except ValueError:
            index = 0
        return index, node

    # -- per-pod settings --------------------------------------------------------------------

    def _annotation(self, pod: Pod, name: str) -> str | None:
        return (pod.metadata.annotations or {}).get(name)

    def _warn_once(self, pod: Pod, what: str, message: str) -> None:
        key = (pod.metadata.uid or "", what)
        if key not in self._warned:
            self._warned.add(key)
            logger.warning("pod %s/%s: %s", pod.metadata.namespace, pod.metadata.name, message)

    def _duration(self, pod: Pod) -> float:
        text = self._annotation(pod, DURATION_ANNOTATION)
        if text is not None:
            try:
                return parse_duration(text)
            except ValueError as exc:
                self._warn_once(pod, "duration", f"ignoring {DURATION_ANNOTATION}: {exc}")
        return self._config.job_duration

    def _exit_code(self, pod: Pod) -> int:
        text = self._annotation(pod, EXIT_CODE_ANNOTATION)
        if text is not None:
            try:
                return int(text)
            except ValueError:
                self._warn_once(pod, "exit", f"ignoring {EXIT_CODE_ANNOTATION}={text!r}")
        return 0

    def stage_since(self, key: ObjectKey) -> tuple[str, float] | None:
        """The stage (``"pending"`` or ``"running"``) the kubelet is timing for the pod and
        since when (``clock.monotonic()``), or None if it is not timing it (tests, debugging)."""
        seen = self._seen.get(key)
        return None if seen is None else (seen.stage, seen.since)

    def _since(self, key: ObjectKey, pod: Pod, stage: str) -> float:
        seen = self._seen.get(key)
        uid = pod.metadata.uid or ""
        if seen is None or seen.uid != uid or seen.stage != stage:
            seen = _Seen(uid, stage, self._clock.monotonic())
            self._seen[key] = seen
        return seen.since

    # -- reconcile ---------------------------------------------------------------------------

    async def reconcile(self, request: Request) -> Result:
        """Move the pod one step along its simulated life; see the module docstring."""
        pod = self._pods.get_or_none(request.namespace, request.name)
        if pod is None or pod.spec is None or not pod.spec.node_name:
            self._seen.pop(request, None)
            return Result()
        node = self._our_node(pod.spec.node_name)
        if node is None:
            return Result()
        if pod.metadata.deletion_timestamp is not None:
            await self._remove(request, pod)
            return Result()
        phase = (pod.status.phase if pod.status else None) or "Pending"
        if phase in TERMINAL_PHASES:
            self._seen.pop(request, None)
            return Result()
        now = self._clock.monotonic()
        if phase == "Pending":
            due = self._since(request, pod, "pending") + self._config.pod_start_delay
            if now < due:
                return Result(requeue_after=due - now)
            await self._start(request, pod, node[0])
            return Result(requeue_after=self._config.pod_ready_delay)
        since = self._since(request, pod, "running")
        ready = _is_ready(pod)
        ends = pod.spec.restart_policy in ("Never", "OnFailure")
        end_due = since + self._duration(pod) if ends else None
        ready_due = None if ready else since + self._config.pod_ready_delay
        if end_due is not None and now >= end_due:
            await self._finish(request, pod)
            return Result()
        if ready_due is not None and now >= ready_due:
            await self._set_ready(pod)
            ready_due = None
        next_due = min((d for d in (end_due, ready_due) if d is not None), default=None)
        return Result() if next_due is None else Result(requeue_after=max(next_due - now, 0.0))

    # -- status writes -----------------------------------------------------------------------

    def _now(self) -> datetime:
        return self._clock.now().replace(microsecond=0)

    async def _write(self, pod: Pod, status: PodStatus) -> None:
        api = self._client.api(Pod, namespace=pod.metadata.namespace)
        await api.update(pod, msgspec.structs.replace(pod, status=status), subresource="status")

    def _pod_ip(self, index: int, node: str) -> str:
        n = self._ips.get(node, 0)
        self._ips[node] = n + 1
        return f"10.244.{index}.{n % 250 + 2}"

    async def _start(self, key: ObjectKey, pod: Pod, index: int) -> None:
        assert pod.spec is not None
        now = self._now()
        node = pod.spec.node_name or ""
        host, ip = node_ip(index), self._pod_ip(index, node)
        old = pod.status or PodStatus()
        kept = [c for c in (old.conditions or []) if c.type == "PodScheduled"]
        status = msgspec.structs.replace(
            old,
            phase="Running",
            host_ip=host,
            host_ips=[HostIP(ip=host)],
            pod_ip=ip,
            pod_ips=[PodIP(ip=ip)],
            start_time=now,
            conditions=[
                *(kept or [_condition("PodScheduled", "True", now)]),
                _condition("PodReadyToStartContainers", "True", now),
                _condition("Initialized", "True", now),
                _condition("ContainersReady", "False", now, "ContainersNotReady"),
                _condition("Ready", "False", now, "ContainersNotReady"),
            ],
            container_statuses=[
                ContainerStatus(
                    name=c.name,
                    image=c.image,
                    image_id=f"kcm-sim://{c.image}",
                    container_id=f"kcm-sim://{pod.metadata.uid}/{c.name}",
                    ready=False,
                    started=True,
                    restart_count=0,
                    state=ContainerState(running=ContainerStateRunning(started_at=now)),
                )
                for c in pod.spec.containers or []
            ],
        )
        await self._write(pod, status)
        self._seen[key] = _Seen(pod.metadata.uid or "", "running", self._clock.monotonic())
        if self._recorder is not None:
            self._recorder.event(pod, "Normal", "Started", "Started simulated containers")

    async def _set_ready(self, pod: Pod) -> None:
        old = pod.status or PodStatus()
        now = self._now()
        conditions = [
            _condition(c.type, "True", now)
            if c.type in ("Ready", "ContainersReady") and c.status != "True"
            else c
            for c in old.conditions or []
        ]
        statuses = [msgspec.structs.replace(s, ready=True) for s in old.container_statuses or []]
        await self._write(
            pod, msgspec.structs.replace(old, conditions=conditions, container_statuses=statuses)
        )

    async def _finish(self, key: ObjectKey, pod: Pod) -> None:
        assert pod.spec is not None
        old = pod.status or PodStatus()
        now = self._now()
        code = self._exit_code(pod)
        restart = code != 0 and pod.spec.restart_policy == "OnFailure"
        terminated = ContainerState(
            terminated=ContainerStateTerminated(
                exit_code=code,
                reason="Completed" if code == 0 else "Error",
                finished_at=now,
            )
        )
        if restart:
            statuses = [
                msgspec.structs.replace(
                    s,
                    restart_count=(s.restart_count or 0) + 1,
                    last_state=terminated,
                    state=ContainerState(running=ContainerStateRunning(started_at=now)),
                )
                for s in old.container_statuses or []
            ]
            await self._write(pod, msgspec.structs.replace(old, container_statuses=statuses))
            self._seen[key] = _Seen(pod.metadata.uid or "", "running", self._clock.monotonic())
            return
        reason = "PodCompleted" if code == 0 else "PodFailed"
        conditions = [
            _condition(c.type, "False", now, reason)
            if c.type in ("Ready", "ContainersReady")
            else c
            for c in old.conditions or []
        ]
        statuses = [
            msgspec.structs.replace(s, ready=False, started=False, state=terminated)
            for s in old.container_statuses or []
        ]
        await self._write(
            pod,
            msgspec.structs.replace(
                old,
                phase="Succeeded" if code == 0 else "Failed",
                conditions=conditions,
                container_statuses=statuses,
            ),
        )
        self._seen.pop(key, None)

    async def _remove(self, key: ObjectKey, pod: Pod) -> None:
        api = self._client.api(Pod, namespace=pod.metadata.namespace)
        try:
            await api.delete(
                pod.metadata.name or "",
                grace_period_seconds=0,
                preconditions={"uid": pod.metadata.uid},
            )
        except (NotFound, Conflict):
            pass  # already gone, or a new pod of the same name
        self._seen.pop(key, None)

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Run the ``sim-kubelet`` controller (needs the informer factory running)."""
        await self.controller.run(task_status=task_status)


def _is_ready(pod: Pod) -> bool:
    conditions = (pod.status.conditions if pod.status else None) or []
    return any(c.type == "Ready" and c.status == "True" for c in conditions)
