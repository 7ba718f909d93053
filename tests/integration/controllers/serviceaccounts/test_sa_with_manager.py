"""The three controllers started the way ``kcm`` starts them: ``add_to_manager`` on a Manager,
with ``--service-account-private-key-file`` and ``--root-ca-file`` as keyword arguments."""

from __future__ import annotations

from pathlib import Path

import anyio
import jwt
import msgspec
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers import ControllerDisabled, rootcacertpublisher, serviceaccount
from kcm.controllers import serviceaccounttoken as tokens
from kcm.errors import ConfigError
from kcm.models.core_v1 import ConfigMap, Namespace, Secret, ServiceAccount
from kcm.models.meta_v1 import ObjectMeta
from kcm.runtime import Manager
from kcm.testing import client_config_for, eventually
from tests.integration.controllers.serviceaccounts.sa_harness import certificate_pem

pytestmark = pytest.mark.anyio


async def test_add_to_manager_runs_all_three(api_server: ApiServer, tmp_path: Path) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    key_file = tmp_path / "sa.key"
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
    )
    ca = certificate_pem()
    ca_file = tmp_path / "ca.crt"
    ca_file.write_bytes(ca)
    config = msgspec.structs.replace(client_config_for(api_server), qps=-1)
    async with ApiClient(config) as client, anyio.create_task_group() as tg:
        manager = Manager(client)
        with pytest.raises(ControllerDisabled, match="no private key"):
            tokens.add_to_manager(manager)
        with pytest.raises(ConfigError):
            tokens.add_to_manager(manager, service_account_private_key_file=tmp_path / "none")
        tokens.add_to_manager(
            manager, service_account_private_key_file=key_file, root_ca_file=ca_file
        )
        serviceaccount.add_to_manager(manager)
        rootcacertpublisher.add_to_manager(manager)  # no file: the client's CA (none here)
        await tg.start(manager.run)
        await client.api(Namespace).create(Namespace(metadata=ObjectMeta(name="team")))

        async def set_up() -> bool:
            accounts = (await client.api(ServiceAccount, "team").list()).items
            maps = (await client.api(ConfigMap, "team").list()).items
            return [a.metadata.name for a in accounts] == ["default"] and [
                (m.metadata.name, dict(m.data or {})) for m in maps
            ] == [("kube-root-ca.crt", {"ca.crt": ""})]

        await eventually(set_up)
        await client.api(Secret, "team").create(
            Secret(
                metadata=ObjectMeta(
                    name="default-token", annotations={tokens.SERVICE_ACCOUNT_NAME_KEY: "default"}
                ),
                type=tokens.SECRET_TYPE,
            )
        )

        async def filled() -> bool:
            data = (await client.api(Secret, "team").get("default-token")).data or {}
            return bool(data.get("token")) and data.get("ca.crt") == ca

        await eventually(filled)
        data = (await client.api(Secret, "team").get("default-token")).data or {}
        claims = jwt.decode(data["token"], key.public_key(), algorithms=["RS256"])
        assert claims["sub"] == "system:serviceaccount:team:default"
        tg.cancel_scope.cancel()
