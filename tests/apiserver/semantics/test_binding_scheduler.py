"""``pods/binding`` as the simulated scheduler uses it (kcm's client, a Binding model)."""

from __future__ import annotations

import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.errors import Conflict, NotFound
from kcm.models import Binding, Container, ObjectMeta, ObjectReference, Pod, PodSpec, encode
from kcm.testing import client_config_for

pytestmark = pytest.mark.anyio


def binding(name: str, node: str) -> bytes:
    return encode(
        Binding(
            metadata=ObjectMeta(name=name),
            target=ObjectReference(api_version="v1", kind="Node", name=node),
        )
    )


async def test_binding_sets_the_node_once(api_server: ApiServer) -> None:
    async with ApiClient(client_config_for(api_server)) as client:
        pods = client.api(Pod, namespace="default")
        await pods.create(
            Pod(
                metadata=ObjectMeta(name="p"),
                spec=PodSpec(containers=[Container(name="c", image="i")]),
            )
        )
        path = "/api/v1/namespaces/default/pods/p/binding"
        headers = {"Content-Type": "application/json"}
        response = await client.request("POST", path, content=binding("p", "n1"), headers=headers)
        assert response.status_code == 201
        bound = await pods.get("p")
        assert bound.spec is not None
        assert bound.spec.node_name == "n1"
        scheduled = [
            c
            for c in (bound.status.conditions if bound.status else None) or []
            if c.type == "PodScheduled"
        ]
        assert [c.status for c in scheduled] == ["True"]
        with pytest.raises(Conflict, match='already assigned to node "n1"'):
            await client.request("POST", path, content=binding("p", "n2"), headers=headers)
        with pytest.raises(NotFound):
            await client.request(
                "POST",
                "/api/v1/namespaces/default/pods/ghost/binding",
                content=binding("ghost", "n1"),
                headers=headers,
            )
