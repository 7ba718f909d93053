"""A kubelet player for the simulated nodes.

For every pod bound to a simulated node it walks the status a kubelet would write:

``Pending`` ─(pod_start_delay)→ ``Running`` ─(pod_ready_delay)→ ``Ready``
                                   └─(job_duration, restartPolicy Never/OnFailure)→ ``Succeeded``

A started pod gets one IP per CIDR of its node's ``spec.podCIDRs`` (the node's IPAM, see
:mod:`._pod_ips`). Readiness follows the simulated outcome of the pod's readiness probes: Ready
``pod_ready_delay`` (plus the largest ``readinessProbe.initialDelaySeconds``) after it started,
unless the annotation ``kcm.dev/simulate-ready`` is ``"false"``; changing that annotation
flips a running pod between Ready and NotReady at once.

A run-to-completion pod's containers exit after ``job_duration`` (annotation
``kcm.dev/simulate-duration``) with exit code 0 (annotation ``kcm.dev/simulate-exit-code``):
exit 0 gives ``Succeeded``, anything else ``Failed``, except with ``restartPolicy:
OnFailure``, where the containers restart in place (``restartCount`` + 1). Pods with
``restartPolicy: Always`` run until deleted. A pod using a CSI volume that needs attaching
stays ``Pending`` (``ContainerCreating``) until its VolumeAttachment is attached
(:mod:`._attached_volumes`). A pod with a ``deletionTimestamp`` is removed at once (DELETE
with grace period 0 and its UID as precondition), as a kubelet does once its containers have
stopped.

Delays are measured on the injected clock from when this process first saw the pod in its
current state, so a restart of kcm only restarts the pending timers.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
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
    Container,
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

from ._attached_volumes import AttachedVolumes
from ._config import (
    DURATION_ANNOTATION,
    EXIT_CODE_ANNOTATION,
    READY_ANNOTATION,
    SIMULATED_LABEL,
    SimulationConfig,
    node_failed,
    parse_duration,
)
from ._nodes import node_ip, pod_cidr_for
from ._pod_ips import PodIPAllocator, PodIPsExhausted
from ._resources import TERMINAL_PHASES
from ._scheduler import NODE_NAME_INDEX, EventRecorder, ensure_node_name_index, pods_on

__all__ = ["Kubelet"]

logger = logging.getLogger(__name__)


@dataclass
class _Seen:
    uid: str
    stage: str  # "pending" or "running"
    since: float  # clock.monotonic()


_NO_IP_RETRY = 5.0
"""Seconds before a pod that got no IP (its node's CIDR is full) is tried again."""


def _condition(
    kind: str, status: str, now: datetime, reason: str | None = None, message: str | None = None
) -> PodCondition:
    return PodCondition(
        type=kind, status=status, last_transition_time=now, reason=reason, message=message
    )


def _unready_message(containers: Sequence[Container]) -> str:
    """The kubelet's message for not-ready containers."""
    return f"containers with unready status: [{' '.join(c.name or '' for c in containers)}]"


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
        self._ips = PodIPAllocator()
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
        self._volumes = AttachedVolumes(factory)
        self.controller.watch(
            self._volumes.attachments,
            enqueue_mapped(
                lambda a: pods_on(self._pods, (a.spec.node_name if a.spec else None) or "")
            ),
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
            seen = self._seen.pop(request, None)
            if seen is not None:
                self._ips.release(seen.uid)
            return Result()
        node = self._our_node(pod.spec.node_name)
        if node is None or node_failed(node[1]):
            return Result()  # a failed node's kubelet is silent; its recovery requeues the pod
        if pod.metadata.deletion_timestamp is not None:
            await self._remove(request, pod)
            return Result()
        phase = (pod.status.phase if pod.status else None) or "Pending"
        if phase in TERMINAL_PHASES:
            self._seen.pop(request, None)
            self._ips.release(pod.metadata.uid or "")
            return Result()
        now = self._clock.monotonic()
        if phase == "Pending":
            due = self._since(request, pod, "pending") + self._config.pod_start_delay
            if now < due:
                return Result(requeue_after=due - now)
            if not self._volumes.attached(pod, pod.spec.node_name):
                return Result()  # ContainerCreating; the VolumeAttachment's change requeues it
            try:
                ips = self._pod_ips(pod, *node)
            except (PodIPsExhausted, ValueError) as exc:
                self._warn_once(pod, "ip", f"cannot start: {exc}")
                return Result(requeue_after=_NO_IP_RETRY)
            await self._start(request, pod, node[0], ips)
            return Result(requeue_after=self._ready_delay(pod))
        since = self._since(request, pod, "running")
        ready = _is_ready(pod)
        passing = self._probes_pass(pod)
        ends = pod.spec.restart_policy in ("Never", "OnFailure")
        end_due = since + self._duration(pod) if ends else None
        ready_due = None if ready or not passing else since + self._ready_delay(pod)
        if end_due is not None and now >= end_due:
            await self._finish(request, pod)
            return Result()
        if ready and not passing:
            await self._set_ready(pod, False)
        elif ready_due is not None and now >= ready_due:
            await self._set_ready(pod, True)
            ready_due = None
        next_due = min((d for d in (end_due, ready_due) if d is not None), default=None)
        return Result() if next_due is None else Result(requeue_after=max(next_due - now, 0.0))

    # -- status writes -----------------------------------------------------------------------

    def _now(self) -> datetime:
        return self._clock.now().replace(microsecond=0)

    async def _write(self, pod: Pod, status: PodStatus) -> None:
        api = self._client.api(Pod, namespace=pod.metadata.namespace)
        await api.update(pod, msgspec.structs.replace(pod, status=status), subresource="status")

    def _pod_ips(self, pod: Pod, index: int, node: Node) -> list[str]:
        """The new pod's IPs: the node's for ``hostNetwork`` pods, else one per CIDR of the
        node's ``spec.podCIDRs`` (a node without one: the simulation's own CIDR for it).

        Raises:
            PodIPsExhausted: the node's pod CIDR is full.
            ValueError: the node's pod CIDR does not parse.
        """
        if pod.spec is not None and pod.spec.host_network:
            return [node_ip(index)]
        spec = node.spec
        cidrs = list((spec.pod_cidrs if spec else None) or ())
        if not cidrs and spec is not None and spec.pod_cidr:
            cidrs = [spec.pod_cidr]
        name = node.metadata.name or ""
        if not cidrs and not self._config.assign_pod_cidrs:
            raise PodIPsExhausted(f"node {name} has no podCIDR yet (node IPAM assigns it)")
        if not cidrs:
            self._warn_once(pod, "cidr", f"node {name} has no podCIDR; using the simulation's")
            cidrs = [pod_cidr_for(index)]
        in_use = [
            p.ip
            for other in self._pods.by_index(NODE_NAME_INDEX, name)
            if other.status is not None
            and other.status.phase not in TERMINAL_PHASES
            and not (other.spec is not None and other.spec.host_network)
            for p in other.status.pod_ips or ()
            if p.ip
        ]
        return self._ips.allocate(name, cidrs, pod.metadata.uid or "", in_use)

    def _ready_delay(self, pod: Pod) -> float:
        """From Running to Ready: ``pod_ready_delay``, plus the largest readiness probe
        ``initialDelaySeconds``."""
        containers = (pod.spec.containers if pod.spec else None) or ()
        probes = [c.readiness_probe for c in containers if c.readiness_probe is not None]
        initial = max((p.initial_delay_seconds or 0 for p in probes), default=0)
        return self._config.pod_ready_delay + initial

    def _probes_pass(self, pod: Pod) -> bool:
        """The simulated outcome of the pod's readiness probes: :data:`READY_ANNOTATION`
        (``"false"`` fails them; anything else, or none, passes)."""
        value = self._annotation(pod, READY_ANNOTATION)
        return value is None or value.strip().lower() != "false"

    async def _start(self, key: ObjectKey, pod: Pod, index: int, ips: list[str]) -> None:
        assert pod.spec is not None
        now = self._now()
        host, ip = node_ip(index), ips[0]
        old = pod.status or PodStatus()
        unready = _unready_message(pod.spec.containers or ())
        kept = [c for c in (old.conditions or []) if c.type == "PodScheduled"]
        status = msgspec.structs.replace(
            old,
            phase="Running",
            host_ip=host,
            host_ips=[HostIP(ip=host)],
            pod_ip=ip,
            pod_ips=[PodIP(ip=i) for i in ips],
            start_time=now,
            conditions=[
                *(kept or [_condition("PodScheduled", "True", now)]),
                _condition("PodReadyToStartContainers", "True", now),
                _condition("Initialized", "True", now),
                _condition("ContainersReady", "False", now, "ContainersNotReady", unready),
                _condition("Ready", "False", now, "ContainersNotReady", unready),
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

    async def _set_ready(self, pod: Pod, ready: bool) -> None:
        """Ready and ContainersReady True, or False (``ContainersNotReady``), with the
        containers' ``ready`` flags."""
        old = pod.status or PodStatus()
        now = self._now()
        containers = (pod.spec.containers if pod.spec else None) or ()
        if ready:
            condition = _condition("", "True", now)
        else:
            condition = _condition(
                "", "False", now, "ContainersNotReady", _unready_message(containers)
            )
        conditions = [
            msgspec.structs.replace(condition, type=c.type)
            if c.type in ("Ready", "ContainersReady") and c.status != condition.status
            else c
            for c in old.conditions or []
        ]
        statuses = [msgspec.structs.replace(s, ready=ready) for s in old.container_statuses or []]
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
        self._ips.release(pod.metadata.uid or "")
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
