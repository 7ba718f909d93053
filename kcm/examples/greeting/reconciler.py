"""Tutorial step 3: the reconciler, and how it is wired into a Manager.

For each Greeting it makes sure a ConfigMap ``greeting-<name>`` holds the message, owned by
the Greeting (so the garbage collector deletes it with its owner), and writes the message to
the Greeting's status. It is level-based: it reads the current state from the caches and
writes only what differs, so running it twice, or after a crash, is harmless.
"""

from __future__ import annotations

import msgspec

from kcm.models import ConfigMap, ObjectMeta
from kcm.runtime import Manager, Request, Result, set_controller_reference

from .api import Greeting, GreetingStatus

__all__ = ["GreetingReconciler", "add_to_manager", "message_for"]


def message_for(greeting: Greeting) -> str:
    """The greeting a Greeting asks for."""
    return f"Hello, {greeting.spec.name}!"


class GreetingReconciler:
    """Keeps each Greeting's ConfigMap and status in line with its spec."""

    def __init__(self, manager: Manager) -> None:
        self.client = manager.client
        self.greetings = manager.factory.lister_for(Greeting)  # reads come from caches
        self.config_maps = manager.factory.lister_for(ConfigMap)

    async def reconcile(self, request: Request) -> Result:
        """Bring one Greeting's world in line with its spec (called with its key)."""
        greeting = self.greetings.get_or_none(request.namespace, request.name)
        if greeting is None:
            return Result()  # deleted: the garbage collector removes the ConfigMap
        message = message_for(greeting)
        name = f"greeting-{request.name}"
        desired = set_controller_reference(
            greeting,
            ConfigMap(
                metadata=ObjectMeta(name=name, namespace=request.namespace),
                data={"message": message},
            ),
            greeting.api_version,
            "Greeting",
        )
        config_maps = self.client.api(ConfigMap, request.namespace)
        current = self.config_maps.get_or_none(request.namespace, name)
        if current is None:  # AlreadyExists (a cache behind): raised, retried with backoff
            await config_maps.create(desired)
        elif current.data != desired.data:
            await config_maps.update(current, msgspec.structs.replace(current, data=desired.data))

        status = GreetingStatus(message=message, observed_generation=greeting.metadata.generation)
        if greeting.status != status:
            await self.client.api(Greeting, request.namespace).replace_status(
                msgspec.structs.replace(greeting, status=status)
            )
        return Result()


def add_to_manager(manager: Manager) -> None:
    """Reconcile Greetings when they change, and when a ConfigMap they own changes."""
    controller = (
        manager.controller_for(Greeting)
        .owns(ConfigMap)
        .named("greeting")
        .build(GreetingReconciler(manager))
    )
    manager.add(controller)
