"""The bootstrap signer and the token cleaner against the embedded API server."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import msgspec
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers.bootstrapsigner import BootstrapSigner, detached_signature
from kcm.controllers.tokencleaner import TokenCleaner
from kcm.informers import SharedInformerFactory
from kcm.models import format_time
from kcm.models.core_v1 import ConfigMap, Namespace, Secret
from kcm.models.meta_v1 import ObjectMeta
from kcm.testing import FakeClock, eventually
from tests.integration.controllers.serviceaccounts.sa_harness import running

pytestmark = pytest.mark.anyio

KUBECONFIG = "apiVersion: v1\nclusters: []\n"


def token(token_id: str, *, expiration: str | None = None, signing: bool = True) -> Secret:
    data = {"token-id": token_id, "token-secret": f"{token_id}secret0000"}
    if signing:
        data["usage-bootstrap-signing"] = "true"
    if expiration:
        data["expiration"] = expiration
    return Secret(
        metadata=ObjectMeta(name=f"bootstrap-token-{token_id}", namespace="kube-system"),
        type="bootstrap.kubernetes.io/token",
        string_data=data,
    )


async def ensure_namespace(client: ApiClient, name: str) -> None:
    api: Any = client.api(Namespace)
    if name not in {n.metadata.name for n in (await api.list()).items}:
        await api.create(Namespace(metadata=ObjectMeta(name=name)))


async def test_cluster_info_is_signed_with_each_signing_token(api_server: ApiServer) -> None:
    def signer(client: ApiClient, factory: SharedInformerFactory) -> BootstrapSigner:
        return BootstrapSigner(client, factory)

    async with running(api_server, signer) as env:
        for ns in ("kube-public", "kube-system"):
            await ensure_namespace(env.client, ns)
        secrets: Any = env.client.api(Secret, "kube-system")
        await secrets.create(token("abcdef"))
        await secrets.create(token("nosign", signing=False))
        cms: Any = env.client.api(ConfigMap, "kube-public")
        await cms.create(
            ConfigMap(metadata=ObjectMeta(name="cluster-info"), data={"kubeconfig": KUBECONFIG})
        )
        expected = detached_signature(KUBECONFIG, "abcdef", "abcdefsecret0000")

        async def signed() -> bool:
            data = (await cms.get("cluster-info")).data or {}
            return data.get("jws-kubeconfig-abcdef") == expected

        await eventually(signed)
        assert set((await cms.get("cluster-info")).data) == {"kubeconfig", "jws-kubeconfig-abcdef"}

        await secrets.delete("bootstrap-token-abcdef")

        async def unsigned() -> bool:
            return set((await cms.get("cluster-info")).data or {}) == {"kubeconfig"}

        await eventually(unsigned)
        await env.quiesce()
        writes = env.tap.count("PATCH", "/configmaps/cluster-info") + 1  # and the test's
        cm = await cms.get("cluster-info")
        labelled = msgspec.structs.replace(cm.metadata, labels={"touched": "yes"})
        await cms.update(cm, msgspec.structs.replace(cm, metadata=labelled))  # signatures stand
        await env.quiesce()
        assert env.tap.count("PATCH", "/configmaps/cluster-info") == writes


async def test_expired_tokens_are_deleted_when_they_expire(api_server: ApiServer) -> None:
    clock = FakeClock()
    now = clock.now()

    def cleaner(client: ApiClient, factory: SharedInformerFactory) -> TokenCleaner:
        return TokenCleaner(client, factory, clock=clock)

    async with running(api_server, cleaner) as env:
        await ensure_namespace(env.client, "kube-system")
        secrets: Any = env.client.api(Secret, "kube-system")
        await secrets.create(token("past00", expiration=format_time(now - timedelta(seconds=1))))
        await secrets.create(token("soon00", expiration=format_time(now + timedelta(minutes=5))))
        await secrets.create(token("never0"))

        async def names() -> set[str]:
            return {s.metadata.name for s in (await secrets.list()).items}

        async def past_gone() -> bool:
            return "bootstrap-token-past00" not in await names()

        await eventually(past_gone)
        await env.quiesce()
        assert "bootstrap-token-soon00" in await names()
        await clock.advance(301)

        async def soon_gone() -> bool:
            return "bootstrap-token-soon00" not in await names()

        await eventually(soon_gone)
        assert "bootstrap-token-never0" in await names()
