"""The tutorial's controller (kcm.examples.greeting) on the embedded API server.

docs/tutorial/5-test.md shows this file: it is how to test a controller of your own.
"""

from __future__ import annotations

import anyio
import msgspec
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.examples.greeting.api import Greeting, GreetingSpec
from kcm.examples.greeting.main import install_crd
from kcm.examples.greeting.reconciler import add_to_manager, message_for
from kcm.models import ConfigMap, ObjectMeta
from kcm.runtime import Manager
from kcm.testing import client_config_for, eventually

pytestmark = pytest.mark.anyio


def test_the_message_names_who_to_greet() -> None:
    assert message_for(Greeting(spec=GreetingSpec(name="Ada"))) == "Hello, Ada!"


async def test_a_greeting_gets_its_config_map_and_status(api_server: ApiServer) -> None:
    async with ApiClient(client_config_for(api_server)) as client:
        await install_crd(client)
        manager = Manager(client)
        add_to_manager(manager)
        greetings = client.api(Greeting, "default")
        config_maps = client.api(ConfigMap, "default")

        async def message() -> str | None:
            found = await config_maps.list()
            by_name = {cm.metadata.name: cm for cm in found.items}
            cm = by_name.get("greeting-ada")
            return (cm.data or {}).get("message") if cm else None

        async with anyio.create_task_group() as tg:
            await tg.start(manager.run)
            created = await greetings.create(
                Greeting(metadata=ObjectMeta(name="ada"), spec=GreetingSpec(name="Ada"))
            )

            async def answered() -> bool:
                return await message() == "Hello, Ada!"

            await eventually(answered)
            cm = await config_maps.get("greeting-ada")
            owner = (cm.metadata.owner_references or [])[0]
            assert (owner.kind, owner.name, owner.controller) == ("Greeting", "ada", True)
            status = (await greetings.get("ada")).status
            assert status is not None
            assert status.message == "Hello, Ada!"

            # A changed spec changes the ConfigMap: the reconciler is level-based.
            current = await greetings.get("ada")
            await greetings.update(
                current, msgspec.structs.replace(current, spec=GreetingSpec(name="Grace"))
            )

            async def changed() -> bool:
                return await message() == "Hello, Grace!"

            await eventually(changed)

            # Someone edits the owned ConfigMap: the controller puts the message back.
            cm = await config_maps.get("greeting-ada")
            await config_maps.update(cm, msgspec.structs.replace(cm, data={"message": "hi"}))
            await eventually(changed)
            assert created.metadata.uid == owner.uid
            tg.cancel_scope.cancel()
