"""Helpers for the cloud controllers' integration tests: controllers on a FakeCloud and a
FakeClock against the embedded API server, with :meth:`Env.quiesce` before negative checks."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import msgspec

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.informers import SharedInformerFactory
from kcm.models.core_v1 import Node, NodeCondition, NodeSpec, NodeStatus, Taint
from kcm.models.meta_v1 import ObjectMeta
from kcm.testing import FakeClock, client_config_for
from tests.helpers.controller_quiesce import quiesce


@dataclass
class Env:
    client: ApiClient
    factory: SharedInformerFactory
    built: list[Any]
    clock: FakeClock

    async def quiesce(self) -> None:
        await quiesce(
            [b.controller for b in self.built if hasattr(b, "controller")],
            self.factory,
            self.client,
            clock=self.clock,
        )


Maker = Callable[[ApiClient, SharedInformerFactory], Any]


@asynccontextmanager
async def running(server: ApiServer, clock: FakeClock, *makers: Maker) -> AsyncIterator[Env]:
    """Each ``make(client, factory)`` running until the block ends."""
    config = msgspec.structs.replace(client_config_for(server), qps=-1)
    async with ApiClient(config) as client, anyio.create_task_group() as tg:
        factory = SharedInformerFactory(client)
        built = [make(client, factory) for make in makers]
        with anyio.fail_after(10):
            await tg.start(factory.run)
            for runnable in built:
                await tg.start(runnable.run)
        yield Env(client, factory, built, clock)
        tg.cancel_scope.cancel()


def node(
    name: str,
    *,
    ready: str | None = "True",
    labels: dict[str, str] | None = None,
    taints: Sequence[Taint] = (),
    provider_id: str | None = None,
    pod_cidrs: Sequence[str] = (),
    annotations: dict[str, str] | None = None,
) -> Node:
    conditions = [NodeCondition(type="Ready", status=ready)] if ready is not None else None
    return Node(
        metadata=ObjectMeta(name=name, labels=labels, annotations=annotations),
        spec=NodeSpec(
            taints=list(taints) or None,
            provider_id=provider_id,
            pod_cidr=pod_cidrs[0] if pod_cidrs else None,
            pod_cidrs=list(pod_cidrs) or None,
        ),
        status=NodeStatus(conditions=conditions),
    )


async def create_node(client: ApiClient, obj: Node) -> Node:
    """Create ``obj`` with its status (conditions are written through ``/status``)."""
    api = client.api(Node)
    created = await api.create(obj)
    if obj.status is not None and obj.status.conditions:
        created = await api.replace_status(msgspec.structs.replace(created, status=obj.status))
    return created
