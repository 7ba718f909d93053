"""Simulated nodes: register Ready Nodes with capacity, then heartbeat like a kubelet.

A kubelet proves it is alive two ways: it renews its Lease in ``kube-node-lease`` every 10 s
(what the node lifecycle controller watches) and refreshes the Node's conditions less often.
:class:`NodeSimulator` does both for ``config.nodes`` nodes. A simulated Node deleted by
someone else stays deleted (a real kubelet does not re-register either), so deleting one is a
way to watch podgc clean up its pods. A Node named ``<prefix><n>`` (``n`` above the count) and
labelled ``kcm.dev/simulated=true`` that someone creates is run too, from the next heartbeat:
that is how a node is added at run time.
"""

from __future__ import annotations

import logging
from datetime import datetime

import anyio
import msgspec
from anyio.abc import TaskStatus

from kcm.client import ApiClient
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.controllerkit import CONTROLLER_MANAGED_ATTACH_DETACH_ANNOTATION
from kcm.errors import AlreadyExists, ApiError, Conflict, KcmError, NotFound
from kcm.models import (
    DaemonEndpoint,
    Lease,
    LeaseSpec,
    MicroTime,
    Node,
    NodeAddress,
    NodeCondition,
    NodeDaemonEndpoints,
    NodeSpec,
    NodeStatus,
    NodeSystemInfo,
    ObjectMeta,
    OwnerReference,
)

from ._config import FAILURE_ANNOTATION, SIMULATED_LABEL, SimulationConfig, node_failed

__all__ = ["NODE_LEASE_NAMESPACE", "NodeSimulator", "node_ip", "pod_cidr_for"]

logger = logging.getLogger(__name__)

NODE_LEASE_NAMESPACE = "kube-node-lease"
"""Where each simulated node renews its heartbeat Lease, as kubelets do."""

_CONDITIONS = (
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
    ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
)


_ANNOTATIONS = {CONTROLLER_MANAGED_ATTACH_DETACH_ANNOTATION: "true"}
"""What a kubelet with ``--enable-controller-attach-detach`` (its default) puts on its Node."""


def node_ip(index: int) -> str:
    """The InternalIP of the ``index``-th simulated node (1-based)."""
    return f"172.18.{index // 250}.{index % 250 + 2}"


def pod_cidr_for(index: int) -> str:
    """The pod CIDR of the ``index``-th simulated node: ``10.244.<index>.0/24``.

    Stand-in for kube-controller-manager's node IPAM controller (``nodeipam`` with
    ``--allocate-node-cidrs``), which gives every Node a slice of the cluster CIDR; the
    simulation assigns it when it registers the node and no one else has, unless
    ``SimulationConfig.assign_pod_cidrs`` is off (nodeipam runs).
    """
    return f"10.244.{index}.0/24"


def _seconds(now: datetime) -> datetime:
    return now.replace(microsecond=0)


def _posted_ready(node: Node) -> bool:
    """Whether the node's conditions are the ones a healthy simulated kubelet posts."""
    by_type = {c.type: c for c in (node.status.conditions if node.status else None) or ()}
    return all(
        (c := by_type.get(kind)) is not None and c.status == status and c.reason == reason
        for kind, status, reason, _ in _CONDITIONS
    )


class NodeSimulator:
    """Registers the simulated Nodes and keeps them alive (Lease renewals, Ready heartbeats).

    Args:
        client: the API client.
        config: node count, capacity and heartbeat periods.
        clock: times heartbeats and stamps them.

    Guarantees:
        :meth:`run` calls ``task_status.started()`` after one registration attempt per node
        (failures are logged and retried at the next heartbeat), so Nodes exist by then unless
        the server refused them.
    """

    def __init__(
        self,
        client: ApiClient,
        *,
        config: SimulationConfig | None = None,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self._client = client
        self._config = config if config is not None else SimulationConfig()
        self._clock = clock
        self._nodes = client.api(Node)
        self._leases = client.api(Lease, namespace=NODE_LEASE_NAMESPACE)
        self._registered: dict[str, Node] = {}
        self._lease: dict[str, Lease] = {}
        self._gone: set[str] = set()
        self._failed: set[str] = set()
        self._last_status = -float("inf")

    @property
    def names(self) -> list[str]:
        """The nodes this simulator runs."""
        return self._config.node_names()

    @property
    def registered(self) -> list[str]:
        """The nodes registered and still alive."""
        return [name for name in self.names if name in self._registered]

    def _desired(self, index: int, name: str, now: datetime) -> Node:
        return Node(
            metadata=ObjectMeta(
                name=name,
                labels={
                    "kubernetes.io/hostname": name,
                    "kubernetes.io/os": "linux",
                    "kubernetes.io/arch": "amd64",
                    "node.kubernetes.io/instance-type": "kcm-simulated",
                    SIMULATED_LABEL: "true",
                },
                annotations=dict(_ANNOTATIONS),
            ),
            spec=NodeSpec(
                # node IPAM's job when the nodeipam controller runs (then left to it)
                pod_cidr=pod_cidr_for(index) if self._config.assign_pod_cidrs else None,
                pod_cidrs=[pod_cidr_for(index)] if self._config.assign_pod_cidrs else None,
                provider_id=f"kcm://{name}",
            ),
            status=self._status(index, name, now, None),
        )

    def _status(self, index: int, name: str, now: datetime, old: Node | None) -> NodeStatus:
        config = self._config
        resources = {
            "cpu": config.node_cpu,
            "memory": config.node_memory,
            "pods": str(config.node_pods),
            "ephemeral-storage": "100Gi",
        }
        previous = {
            c.type: c for c in ((old.status.conditions if old and old.status else None) or [])
        }
        conditions = []
        for kind, status, reason, message in _CONDITIONS:
            before = previous.get(kind)
            same = before is not None and before.status == status
            conditions.append(
                NodeCondition(
                    type=kind,
                    status=status,
                    reason=reason,
                    message=message,
                    last_heartbeat_time=_seconds(now),
                    last_transition_time=(
                        before.last_transition_time if same and before else _seconds(now)
                    ),
                )
            )
        kept = old.status if old is not None and old.status is not None else NodeStatus()
        return NodeStatus(
            # the attach/detach controller's and the kubelet's volume lists are not heartbeats
            volumes_attached=kept.volumes_attached,
            volumes_in_use=kept.volumes_in_use,
            capacity=resources,
            allocatable=resources,
            conditions=conditions,
            addresses=[
                NodeAddress(type="InternalIP", address=node_ip(index)),
                NodeAddress(type="Hostname", address=name),
            ],
            daemon_endpoints=NodeDaemonEndpoints(kubelet_endpoint=DaemonEndpoint(port=10250)),
            node_info=NodeSystemInfo(
                architecture="amd64",
                operating_system="linux",
                os_image="kcm simulated node",
                kernel_version="simulated",
                kubelet_version="v1.32.0-kcm",
                kube_proxy_version="",
                container_runtime_version="kcm-sim://1.0",
                machine_id=f"kcm-{name}",
                system_uuid=f"kcm-{name}",
                boot_id=f"kcm-{name}",
            ),
        )

    # -- registration ------------------------------------------------------------------------

    async def _register(self, index: int, name: str) -> None:
        now = self._clock.now()
        desired = self._desired(index, name, now)
        try:
            node = await self._nodes.create(desired)
        except AlreadyExists:
            existing = await self._nodes.get(name)
            labels = {**(existing.metadata.labels or {}), **(desired.metadata.labels or {})}
            annotations = {**(existing.metadata.annotations or {}), **_ANNOTATIONS}
            relabelled = msgspec.structs.replace(
                existing,
                metadata=msgspec.structs.replace(
                    existing.metadata, labels=labels, annotations=annotations
                ),
            )
            spec = existing.spec or NodeSpec()
            if not spec.pod_cidr and self._config.assign_pod_cidrs:  # set once, then immutable
                relabelled = msgspec.structs.replace(
                    relabelled,
                    spec=msgspec.structs.replace(
                        spec, pod_cidr=pod_cidr_for(index), pod_cidrs=[pod_cidr_for(index)]
                    ),
                )
            node = await self._nodes.update(existing, relabelled)
            node = await self._write_status(index, node, now)
        self._registered[name] = node
        logger.info("simulated node %s registered (Ready)", name)

    async def _remove_extra(self) -> None:
        """Delete simulated nodes left by an earlier run with more nodes."""
        wanted = set(self.names)
        listed = await self._nodes.list(label_selector=f"{SIMULATED_LABEL}=true")
        for node in listed.items:
            name = node.metadata.name or ""
            if name.startswith(self._config.node_prefix) and name not in wanted:
                try:
                    await self._nodes.delete(name)
                    logger.info("deleted simulated node %s (beyond --simulate-nodes)", name)
                except NotFound:
                    pass

    # -- heartbeats --------------------------------------------------------------------------

    async def _renew_lease(self, name: str) -> None:
        now = MicroTime.from_datetime(self._clock.now())
        node = self._registered[name]
        old = self._lease.get(name)
        if old is None:
            lease = Lease(
                metadata=ObjectMeta(
                    name=name,
                    namespace=NODE_LEASE_NAMESPACE,
                    owner_references=[
                        OwnerReference(
                            api_version="v1", kind="Node", name=name, uid=node.metadata.uid or ""
                        )
                    ],
                ),
                spec=LeaseSpec(
                    holder_identity=name,
                    lease_duration_seconds=self._config.lease_duration,
                    renew_time=now,
                ),
            )
            try:
                self._lease[name] = await self._leases.create(lease)
                return
            except AlreadyExists:
                old = await self._leases.get(name)
        spec = old.spec or LeaseSpec()
        renewed = msgspec.structs.replace(
            old,
            spec=msgspec.structs.replace(
                spec,
                holder_identity=name,
                lease_duration_seconds=self._config.lease_duration,
                renew_time=now,
            ),
        )
        try:
            self._lease[name] = await self._leases.update(old, renewed)
        except (Conflict, NotFound):
            self._lease.pop(name, None)  # re-read (or re-create) on the next beat
            raise

    async def _check(self, index: int, name: str, *, refresh: bool) -> bool:
        """GET the node (NotFound: someone deleted it); rewrite its status if ``refresh`` or
        if it is not Ready (someone marked it Unknown; a kubelet posts at once then).

        Returns:
            False if the node is failed (:data:`FAILURE_ANNOTATION`): nothing was written.
        """
        node = await self._nodes.get(name)
        self._registered[name] = node
        if node_failed(node):
            if name not in self._failed:
                logger.info("simulated node %s failed: heartbeats and Lease renewals stop", name)
                self._failed.add(name)
            return False
        if name in self._failed:
            logger.info("simulated node %s is back: heartbeats and Lease renewals resume", name)
            self._failed.discard(name)
        if refresh or not _posted_ready(node):
            self._registered[name] = await self._write_status(index, node, self._clock.now())
        return True

    async def _write_status(self, index: int, node: Node, now: datetime) -> Node:
        """Replace ``node``'s status with a fresh heartbeat (transition times kept)."""
        name = node.metadata.name or ""
        return await self._nodes.update(
            node,
            msgspec.structs.replace(node, status=self._status(index, name, now, node)),
            subresource="status",
        )

    @property
    def failed(self) -> list[str]:
        """The nodes failed by :data:`FAILURE_ANNOTATION`, as of the last heartbeat."""
        return sorted(self._failed)

    async def fail(self, name: str) -> None:
        """Make node ``name`` fail: annotate it :data:`FAILURE_ANNOTATION` ``"true"`` (what
        ``kubectl annotate node <name> kcm.dev/simulate-node-failure=true`` does); it goes
        silent from the next heartbeat.

        Raises:
            NotFound: no such node.
        """
        await self._nodes.patch(name, {"metadata": {"annotations": {FAILURE_ANNOTATION: "true"}}})

    async def recover(self, name: str) -> None:
        """Bring node ``name`` back: remove :data:`FAILURE_ANNOTATION` (``kubectl annotate node
        <name> kcm.dev/simulate-node-failure-``); it posts status and renews its Lease from
        the next heartbeat.

        Raises:
            NotFound: no such node.
        """
        await self._nodes.patch(name, {"metadata": {"annotations": {FAILURE_ANNOTATION: None}}})

    async def _added_nodes(self) -> list[tuple[int, str]]:
        """Nodes added at run time: ``<node_prefix><n>`` with ``n`` above ``nodes``, created by
        someone else with the :data:`SIMULATED_LABEL` label (``kubectl create``); from their
        first heartbeat on they are run as the configured ones. Best effort: a failed LIST
        just skips them for this beat."""
        try:
            listed = await self._nodes.list(label_selector=f"{SIMULATED_LABEL}=true")
        except (ApiError, KcmError) as exc:
            logger.warning("could not list simulated nodes: %s", exc)
            return []
        added = []
        for node in listed.items:
            name = node.metadata.name or ""
            number = name.removeprefix(self._config.node_prefix)
            if name != number and number.isdigit() and int(number) > self._config.nodes:
                added.append((int(number), name))
                self._gone.discard(name)  # created (again) by someone: run it
        return sorted(added)

    async def beat(self) -> None:
        """One heartbeat: register missing nodes, renew every Lease, and refresh the Ready
        conditions when ``status_period`` has passed. Errors are logged, never raised."""
        refresh = self._clock.monotonic() - self._last_status >= self._config.status_period
        if refresh:
            self._last_status = self._clock.monotonic()
        for index, name in [*enumerate(self.names, start=1), *await self._added_nodes()]:
            if name in self._gone:
                continue
            try:
                if name not in self._registered:
                    await self._register(index, name)
                elif not await self._check(index, name, refresh=refresh):
                    continue  # failed: no Lease renewal either
                await self._renew_lease(name)
            except NotFound:
                if name in self._registered:
                    logger.warning("simulated node %s was deleted; it stays down", name)
                    self._registered.pop(name, None)
                    self._lease.pop(name, None)
                    self._gone.add(name)
            except (ApiError, KcmError) as exc:
                logger.warning("simulated node %s: heartbeat failed: %s", name, exc)

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Register the nodes, then heartbeat every ``heartbeat_period`` until cancelled."""
        try:
            await self._remove_extra()
        except (ApiError, KcmError) as exc:
            logger.warning("could not list simulated nodes: %s", exc)
        await self.beat()
        task_status.started()
        while True:
            await self._clock.sleep(self._config.heartbeat_period)
            await self.beat()
