"""Helpers for the node lifecycle integration tests: nodes with Leases on one FakeClock."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import msgspec

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers.nodelifecycle import NodeLifecycleController
from kcm.informers import SharedInformerFactory
from kcm.models import (
    Binding,
    Container,
    Lease,
    LeaseSpec,
    MicroTime,
    Node,
    NodeCondition,
    NodeSpec,
    NodeStatus,
    ObjectMeta,
    ObjectReference,
    Pod,
    PodSpec,
    Taint,
    Toleration,
    encode,
)
from kcm.testing import FakeClock, FakeRecorder, client_config_for, eventually

FAST = {
    "node_monitor_period": 1.0,
    "node_monitor_grace_period": 4.0,
    "node_startup_grace_period": 6.0,
}


class Cluster:
    """A running controller, its client and clock, and helpers to play kubelets."""

    def __init__(
        self, client: ApiClient, clock: FakeClock, ctl: NodeLifecycleController, rec: FakeRecorder
    ) -> None:
        self.client = client
        self.clock = clock
        self.ctl = ctl
        self.recorder = rec
        self.nodes = client.api(Node)
        self.pods = client.api(Pod, "default")
        self.leases = client.api(Lease, "kube-node-lease")

    async def add_node(self, name: str, *, ready: str | None = "True", **labels: str) -> Node:
        now = self.clock.now().replace(microsecond=0)
        conditions = (
            [
                NodeCondition(
                    type="Ready",
                    status=ready,
                    reason="KubeletReady",
                    last_heartbeat_time=now,
                    last_transition_time=now,
                )
            ]
            if ready is not None
            else None
        )
        node = await self.nodes.create(
            Node(metadata=ObjectMeta(name=name, labels=labels or None), spec=NodeSpec())
        )
        if conditions:
            node = await self.nodes.update(
                node,
                msgspec.structs.replace(node, status=NodeStatus(conditions=conditions)),
                subresource="status",
            )
        return node

    async def renew(self, *names: str) -> None:
        """Renew these nodes' Leases now (create them the first time)."""
        for name in names:
            renew = MicroTime.from_datetime(self.clock.now())
            try:
                lease = await self.leases.get(name)
            except Exception:
                await self.leases.create(
                    Lease(
                        metadata=ObjectMeta(name=name, namespace="kube-node-lease"),
                        spec=LeaseSpec(holder_identity=name, renew_time=renew),
                    )
                )
                continue
            spec = lease.spec or LeaseSpec()
            await self.leases.update(
                lease,
                msgspec.structs.replace(
                    lease, spec=msgspec.structs.replace(spec, renew_time=renew)
                ),
            )

    async def heartbeat(self, name: str, status: str = "True") -> None:
        """Post a fresh Ready condition for the node."""
        node = await self.nodes.get(name)
        now = self.clock.now().replace(microsecond=0)
        old = {c.type: c for c in (node.status.conditions if node.status else None) or ()}
        before = old.get("Ready")
        ready = NodeCondition(
            type="Ready",
            status=status,
            reason="KubeletReady",
            last_heartbeat_time=now,
            last_transition_time=(
                before.last_transition_time if before and before.status == status else now
            ),
        )
        conditions = [c for c in old.values() if c.type != "Ready"] + [ready]
        await self.nodes.update(
            node,
            msgspec.structs.replace(node, status=NodeStatus(conditions=conditions)),
            subresource="status",
        )

    async def add_pod(
        self,
        name: str,
        node: str,
        *,
        tolerations: list[Toleration] | None = None,
        bind_later: bool = False,
    ) -> Pod:
        """A Running, Ready pod on ``node`` (``bind_later``: Ready first, then bound through
        ``pods/binding``, as a scheduler does)."""
        await self.pods.create(
            Pod(
                metadata=ObjectMeta(name=name, namespace="default"),
                spec=PodSpec(
                    node_name=None if bind_later else node,
                    tolerations=tolerations,
                    containers=[Container(name="c", image="busybox")],
                ),
            )
        )
        pod = await self.pods.patch_status(
            name,
            {
                "status": {
                    "phase": "Running",
                    "conditions": [{"type": "Ready", "status": "True"}],
                }
            },
        )
        if bind_later:
            binding = Binding(
                metadata=ObjectMeta(name=name, uid=pod.metadata.uid),
                target=ObjectReference(api_version="v1", kind="Node", name=node),
            )
            await self.client.request(
                "POST",
                f"/api/v1/namespaces/default/pods/{name}/binding",
                content=encode(binding),
                headers={"Content-Type": "application/json"},
            )
        return pod

    async def tick(self, seconds: float, *, keep: tuple[str, ...] = ()) -> None:
        """Advance the clock a second at a time, renewing the Leases of ``keep`` each second
        and letting each health pass finish."""
        for _ in range(int(seconds)):
            await self.renew(*keep)
            await self.clock.advance(1.0)
            await self.settle()

    async def settle(self) -> None:
        """Wait until the health pass due now has run."""
        due = self.clock.monotonic()
        await eventually(lambda: self.ctl.last_pass_at >= due)

    async def taints(self, name: str) -> set[tuple[str, str]]:
        node = await self.nodes.get(name)
        return {
            (t.key or "", t.effect or "") for t in (node.spec.taints if node.spec else None) or ()
        }

    async def conditions(self, name: str) -> dict[str, tuple[str, str]]:
        node = await self.nodes.get(name)
        return {
            c.type or "": (c.status or "", c.reason or "")
            for c in (node.status.conditions if node.status else None) or ()
        }


def taint(key: str, effect: str = "NoExecute") -> tuple[str, str]:
    return (f"node.kubernetes.io/{key}", effect)


def tolerate(key: str, seconds: int | None) -> Toleration:
    return Toleration(
        key=f"node.kubernetes.io/{key}",
        operator="Exists",
        effect="NoExecute",
        toleration_seconds=seconds,
    )


@asynccontextmanager
async def cluster(**options: Any) -> AsyncIterator[Cluster]:
    """An embedded API server and a node lifecycle controller sharing one FakeClock."""
    clock = FakeClock()
    recorder = FakeRecorder()
    settings = {**FAST, **options}
    async with (
        ApiServer(clock=clock) as server,
        ApiClient(msgspec.structs.replace(client_config_for(server), qps=-1)) as client,
        anyio.create_task_group() as tg,
    ):
        factory = SharedInformerFactory(client)
        ctl = NodeLifecycleController(client, factory, recorder=recorder, clock=clock, **settings)
        await tg.start(factory.run)
        await tg.start(ctl.run)
        await eventually(lambda: ctl.passes > 0)
        yield Cluster(client, clock, ctl, recorder)
        tg.cancel_scope.cancel()


__all__ = ["FAST", "Cluster", "Taint", "cluster", "taint", "tolerate"]
