"""The ServiceAccount controller against the embedded API server."""

from __future__ import annotations

from typing import Any

import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers.serviceaccount import ServiceAccountsController
from kcm.informers import SharedInformerFactory
from kcm.models.core_v1 import Namespace, ServiceAccount
from kcm.models.meta_v1 import ObjectMeta
from kcm.testing import eventually
from tests.integration.controllers.serviceaccounts.sa_harness import running

pytestmark = pytest.mark.anyio


def accounts(**kwargs: Any) -> Any:
    def make(client: ApiClient, factory: SharedInformerFactory) -> ServiceAccountsController:
        return ServiceAccountsController(client, factory, **kwargs)

    return make


async def names(client: ApiClient, namespace: str) -> list[str]:
    listed = await client.api(ServiceAccount, namespace).list()
    return sorted(sa.metadata.name or "" for sa in listed.items)


async def test_every_active_namespace_gets_default_and_gets_it_back(
    api_server: ApiServer,
) -> None:
    async with running(api_server, accounts()) as env:
        client = env.client

        async def existing() -> bool:  # a namespace that was there before the controller
            return await names(client, "default") == ["default"]

        await eventually(existing)
        await client.api(Namespace).create(Namespace(metadata=ObjectMeta(name="team")))

        async def created() -> bool:
            return await names(client, "team") == ["default"]

        await eventually(created)
        await client.api(ServiceAccount, "team").delete("default")
        await eventually(created)
        await env.quiesce()
        assert env.tap.count("POST", "/namespaces/team/serviceaccounts") == 2


async def test_other_service_accounts_are_left_alone_and_the_list_is_configurable(
    api_server: ApiServer,
) -> None:
    async with running(api_server, accounts(service_accounts=["default", "builder"])) as env:
        client = env.client
        await client.api(Namespace).create(Namespace(metadata=ObjectMeta(name="ci")))
        await client.api(ServiceAccount, "ci").create(
            ServiceAccount(metadata=ObjectMeta(name="mine"))
        )

        async def both() -> bool:
            return await names(client, "ci") == ["builder", "default", "mine"]

        await eventually(both)
        await client.api(ServiceAccount, "ci").delete("mine")
        await env.quiesce()
        assert await names(client, "ci") == ["builder", "default"]


async def test_nothing_is_created_in_a_terminating_namespace(api_server: ApiServer) -> None:
    async with running(api_server, accounts()) as env:
        client = env.client
        await client.api(Namespace).create(Namespace(metadata=ObjectMeta(name="old")))

        async def created() -> bool:
            return await names(client, "old") == ["default"]

        await eventually(created)
        await client.api(Namespace).delete("old")  # Terminating: no namespace controller runs
        ns = await client.api(Namespace).get("old")
        assert ns.status is not None
        assert ns.status.phase == "Terminating"
        await client.api(ServiceAccount, "old").delete("default")
        await env.quiesce()
        assert await names(client, "old") == []
        assert env.tap.count("POST", "/namespaces/old/serviceaccounts") == 1  # the first one
