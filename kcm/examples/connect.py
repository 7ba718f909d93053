"""Tutorial step 1: start the embedded API server, connect the client, write and read a
ConfigMap. Run it with ``python -m kcm.examples.connect``."""

from __future__ import annotations

import anyio

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.models import ConfigMap, ObjectMeta
from kcm.testing import client_config_for

__all__ = ["main"]


async def main() -> str:
    """Create the ConfigMap ``default/hello`` and return what the server stored in it."""
    async with ApiServer() as server, ApiClient(client_config_for(server)) as client:
        config_maps = client.api(ConfigMap, namespace="default")
        await config_maps.create(ConfigMap(metadata=ObjectMeta(name="hello"), data={"to": "you"}))
        stored = await config_maps.get("hello")
        version = stored.metadata.resource_version
        return f"{stored.metadata.name}: {dict(stored.data or {})} (resourceVersion {version})"


if __name__ == "__main__":
    print(anyio.run(main))
