"""The ServiceAccount token controller against the embedded API server."""

from __future__ import annotations

import functools
import random
from typing import Any

import jwt
import msgspec
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers.serviceaccounttoken import (
    SECRET_TYPE,
    SERVICE_ACCOUNT_NAME_KEY,
    SERVICE_ACCOUNT_UID_KEY,
    TokenGenerator,
    TokensController,
)
from kcm.informers import SharedInformerFactory
from kcm.models.core_v1 import ObjectReference, Secret, ServiceAccount
from kcm.models.meta_v1 import ObjectMeta
from kcm.testing import eventually
from tests.integration.controllers.serviceaccounts.sa_harness import CA, running

pytestmark = pytest.mark.anyio

NS = "default"


@functools.cache
def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def tokens(key: Any = None, **kwargs: Any) -> Any:
    def make(client: ApiClient, factory: SharedInformerFactory) -> TokensController:
        return TokensController(
            client,
            factory,
            token_generator=TokenGenerator(key or rsa_key()),
            root_ca=CA,
            rng=random.Random(7),
            **kwargs,
        )

    return make


def token_secret(name: str, account: str, **data: bytes) -> Secret:
    return Secret(
        metadata=ObjectMeta(name=name, annotations={SERVICE_ACCOUNT_NAME_KEY: account}),
        type=SECRET_TYPE,
        data=data or None,
    )


async def secrets(client: ApiClient) -> dict[str, Secret]:
    return {s.metadata.name or "": s for s in (await client.api(Secret, NS).list()).items}


async def account(client: ApiClient, name: str) -> ServiceAccount:
    return await client.api(ServiceAccount, NS).create(
        ServiceAccount(metadata=ObjectMeta(name=name))
    )


def filled_in(secret: Secret | None) -> bool:
    data = (secret.data if secret else None) or {}
    return bool(data.get("token")) and data.get("namespace") == NS.encode()


async def test_a_hand_made_token_secret_is_filled_in(api_server: ApiServer) -> None:
    async with running(api_server, tokens()) as env:
        client = env.client
        sa = await account(client, "builder")
        await client.api(Secret, NS).create(token_secret("builder-token", "builder"))

        async def done() -> bool:
            return filled_in((await secrets(client)).get("builder-token"))

        await eventually(done)
        secret = (await secrets(client))["builder-token"]
        data = secret.data or {}
        assert data["ca.crt"] == CA
        assert (secret.metadata.annotations or {}) == {
            SERVICE_ACCOUNT_NAME_KEY: "builder",
            SERVICE_ACCOUNT_UID_KEY: sa.metadata.uid,
        }
        claims = jwt.decode(data["token"], rsa_key().public_key(), algorithms=["RS256"])
        assert claims["sub"] == "system:serviceaccount:default:builder"
        assert claims["kubernetes.io/serviceaccount/secret.name"] == "builder-token"
        assert claims["kubernetes.io/serviceaccount/service-account.uid"] == sa.metadata.uid
        await env.quiesce()
        assert env.tap.count("PATCH", "/secrets/builder-token") == 1
        # 1.24 semantics: no Secret is made for a ServiceAccount, nor a reference added
        assert sorted(await secrets(client)) == ["builder-token"]
        assert (await client.api(ServiceAccount, NS).get("builder")).secrets is None


async def test_an_emptied_token_or_a_changed_ca_is_made_again(api_server: ApiServer) -> None:
    async with running(api_server, tokens(key=ec.generate_private_key(ec.SECP256R1()))) as env:
        client = env.client
        await account(client, "a")
        await client.api(Secret, NS).create(token_secret("a-token", "a"))

        async def done() -> bool:
            secret = (await secrets(client)).get("a-token")
            return filled_in(secret) and (secret.data or {}).get("ca.crt") == CA

        await eventually(done)
        api = client.api(Secret, NS)
        secret = await api.get("a-token")
        first = (secret.data or {})["token"]
        assert jwt.get_unverified_header(first.decode())["alg"] == "ES256"
        data = {**(secret.data or {}), "token": b"", "ca.crt": b"other"}
        await api.update(secret, msgspec.structs.replace(secret, data=data))
        await eventually(done)


async def test_a_token_secret_of_a_missing_service_account_is_deleted(
    api_server: ApiServer,
) -> None:
    async with running(api_server, tokens()) as env:
        client = env.client
        await client.api(Secret, NS).create(token_secret("ghost-token", "ghost"))
        await client.api(Secret, NS).create(Secret(metadata=ObjectMeta(name="plain")))

        async def deleted() -> bool:
            return "ghost-token" not in await secrets(client)

        await eventually(deleted)
        await env.quiesce()
        assert "plain" in await secrets(client)


async def test_deleting_a_service_account_deletes_its_tokens_only(api_server: ApiServer) -> None:
    async with running(api_server, tokens()) as env:
        client = env.client
        await account(client, "a")
        await account(client, "b")
        for name, owner in (("a-1", "a"), ("a-2", "a"), ("b-1", "b")):
            await client.api(Secret, NS).create(token_secret(name, owner))

        async def filled() -> bool:
            found = await secrets(client)
            return all(filled_in(found.get(n)) for n in ("a-1", "a-2", "b-1"))

        await eventually(filled)
        await client.api(ServiceAccount, NS).delete("a")

        async def deleted() -> bool:
            return sorted(await secrets(client)) == ["b-1"]

        await eventually(deleted)


async def test_a_deleted_secret_is_removed_from_the_service_account(api_server: ApiServer) -> None:
    async with running(api_server, tokens()) as env:
        client = env.client
        await client.api(Secret, NS).create(token_secret("a-token", "a"))
        await client.api(ServiceAccount, NS).create(
            ServiceAccount(
                metadata=ObjectMeta(name="a"),
                secrets=[ObjectReference(name="a-token"), ObjectReference(name="pull")],
            )
        )

        async def filled() -> bool:
            return filled_in((await secrets(client)).get("a-token"))

        await eventually(filled)
        await client.api(Secret, NS).delete("a-token")

        async def removed() -> bool:
            sa = await client.api(ServiceAccount, NS).get("a")
            return [ref.name for ref in sa.secrets or ()] == ["pull"]

        await eventually(removed)


async def test_auto_generate_makes_one_referenced_token_per_service_account(
    api_server: ApiServer,
) -> None:
    async with running(api_server, tokens(auto_generate=True)) as env:
        client = env.client
        await account(client, "a")

        async def one_token() -> bool:
            sa = await client.api(ServiceAccount, NS).get("a")
            refs = [ref.name for ref in sa.secrets or ()]
            found = await secrets(client)
            return len(refs) == 1 and filled_in(found.get(refs[0] or ""))

        await eventually(one_token)
        await env.quiesce()
        (name,) = [n for n in await secrets(client) if n.startswith("a-token-")]
        assert len(name) == len("a-token-") + 5
        await client.api(Secret, NS).delete(name)  # reference removed, a new token made

        async def replaced() -> bool:
            return await one_token() and name not in await secrets(client)

        await eventually(replaced)
        await env.quiesce()
        assert len([n for n in await secrets(client) if n.startswith("a-token-")]) == 1
        assert env.tap.count("POST", "/namespaces/default/secrets") == 2
        await client.api(ServiceAccount, NS).delete("a")

        async def cleaned() -> bool:
            return not [n for n in await secrets(client) if n.startswith("a-token-")]

        await eventually(cleaned)
