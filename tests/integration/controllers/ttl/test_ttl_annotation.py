"""The TTL controller against the embedded API server."""

from __future__ import annotations

import anyio
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers.ttl import TTL_ANNOTATION, TTLController
from kcm.informers import SharedInformerFactory
from kcm.models import Node, ObjectMeta
from kcm.testing import FakeClock, FakeRecorder, client_config_for, eventually

pytestmark = pytest.mark.anyio


async def test_every_node_gets_the_ttl_and_a_wrong_one_is_put_back(api_server: ApiServer) -> None:
    clock = FakeClock()
    async with ApiClient(client_config_for(api_server)) as client, anyio.create_task_group() as tg:
        nodes = client.api(Node)
        await nodes.create(Node(metadata=ObjectMeta(name="a")))
        factory = SharedInformerFactory(client, clock=clock)
        ttl = TTLController(client, factory, recorder=FakeRecorder(), clock=clock)
        tg.start_soon(factory.run)
        await tg.start(ttl.run)
        await nodes.create(Node(metadata=ObjectMeta(name="b")))

        async def annotated(name: str, value: str) -> bool:
            node = await nodes.get(name)
            return (node.metadata.annotations or {}).get(TTL_ANNOTATION) == value

        await eventually(lambda: annotated("a", "0"))
        await eventually(lambda: annotated("b", "0"))
        assert ttl.steps.nodes == 2
        await nodes.patch("a", {"metadata": {"annotations": {TTL_ANNOTATION: "x"}}})
        await eventually(lambda: annotated("a", "0"))
        await nodes.delete("b")
        await eventually(lambda: ttl.steps.nodes == 1)
        tg.cancel_scope.cancel()
