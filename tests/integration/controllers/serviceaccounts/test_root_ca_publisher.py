"""The root CA publisher against the embedded API server."""

from __future__ import annotations

from functools import partial

import msgspec
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers.rootcacertpublisher import (
    DESCRIPTION,
    DESCRIPTION_ANNOTATION,
    ROOT_CA_CONFIG_MAP,
    RootCACertPublisher,
)
from kcm.informers import SharedInformerFactory
from kcm.models.core_v1 import ConfigMap, Namespace
from kcm.models.meta_v1 import ObjectMeta
from kcm.testing import eventually
from tests.integration.controllers.serviceaccounts.sa_harness import CA, running

pytestmark = pytest.mark.anyio


def publisher(client: ApiClient, factory: SharedInformerFactory) -> RootCACertPublisher:
    return RootCACertPublisher(client, factory, root_ca=CA)


async def published(client: ApiClient, namespace: str) -> ConfigMap | None:
    listed = await client.api(ConfigMap, namespace).list()
    found = [cm for cm in listed.items if cm.metadata.name == ROOT_CA_CONFIG_MAP]
    return found[0] if found else None


def correct(cm: ConfigMap | None) -> bool:
    return (
        cm is not None
        and dict(cm.data or {}) == {"ca.crt": CA.decode()}
        and (cm.metadata.annotations or {}).get(DESCRIPTION_ANNOTATION) == DESCRIPTION
    )


async def test_every_namespace_gets_the_config_map_back_when_deleted(
    api_server: ApiServer,
) -> None:
    async with running(api_server, publisher) as env:
        client = env.client
        await client.api(Namespace).create(Namespace(metadata=ObjectMeta(name="team")))

        there = partial(_published_in, client, "team")

        await eventually(there)
        await eventually(partial(_published_in, client, "default"))  # existing namespaces too
        await client.api(ConfigMap, "team").delete(ROOT_CA_CONFIG_MAP)
        await eventually(there)


async def _published_in(client: ApiClient, namespace: str) -> bool:
    return correct(await published(client, namespace))


async def test_edits_are_put_back_and_other_metadata_kept(api_server: ApiServer) -> None:
    async with running(api_server, publisher) as env:
        client = env.client
        api = client.api(ConfigMap, "default")

        there = partial(_published_in, client, "default")

        await eventually(there)
        cm = await api.get(ROOT_CA_CONFIG_MAP)
        meta = msgspec.structs.replace(
            cm.metadata,
            labels={"team": "a"},
            annotations={"note": "mine"},  # the description removed
        )
        edited = msgspec.structs.replace(cm, metadata=meta, data={"ca.crt": "forged", "extra": "x"})
        await api.update(cm, edited)
        await eventually(there)
        restored = await api.get(ROOT_CA_CONFIG_MAP)
        assert restored.metadata.labels == {"team": "a"}
        assert (restored.metadata.annotations or {})["note"] == "mine"
        await env.quiesce()
        writes = env.tap.count("PATCH", f"/namespaces/default/configmaps/{ROOT_CA_CONFIG_MAP}")
        assert writes == 2  # the edit above and one repair


async def test_a_terminating_namespace_is_not_given_one_again(api_server: ApiServer) -> None:
    async with running(api_server, publisher) as env:
        client = env.client
        await client.api(Namespace).create(Namespace(metadata=ObjectMeta(name="old")))

        there = partial(_published_in, client, "old")

        await eventually(there)
        await client.api(Namespace).delete("old")  # Terminating: no namespace controller runs
        await client.api(ConfigMap, "old").delete(ROOT_CA_CONFIG_MAP)
        await env.quiesce()
        assert await published(client, "old") is None
        # kube tries once and drops the create the server refuses (NamespaceTerminating)
        assert env.tap.count("POST", "/namespaces/old/configmaps") <= 2
        assert not any(len(c.queue) for c in env.controllers())
