"""Shared helpers for the garbage collector, namespace and PodGC integration tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import msgspec

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.errors import NotFound
from kcm.informers import SharedInformerFactory
from kcm.models import Unstructured, resource_info_for
from kcm.models.meta_v1 import ObjectMeta, OwnerReference
from kcm.testing import client_config_for


async def gone(api: Any, name: str) -> bool:
    """Whether ``api.get(name)`` says NotFound."""
    try:
        await api.get(name)
    except NotFound:
        return True
    return False


def owner_ref(
    obj: Any, *, block: bool | None = None, controller: bool | None = None
) -> OwnerReference:
    """An ownerReference naming ``obj`` (a typed model or an Unstructured)."""
    meta: ObjectMeta = obj.metadata
    if isinstance(obj, Unstructured):
        api_version, kind = obj.api_version, obj.kind
    else:
        info = resource_info_for(type(obj))
        api_version, kind = info.api_version, info.kind
    return OwnerReference(
        api_version=api_version,
        kind=kind,
        name=meta.name,
        uid=meta.uid,
        block_owner_deletion=block,
        controller=controller,
    )


@asynccontextmanager
async def running(
    server: ApiServer, *runnables: Callable[[ApiClient, SharedInformerFactory], Any]
) -> AsyncIterator[tuple[ApiClient, list[Any]]]:
    """A client and a running factory with each ``runnable(client, factory)`` started."""
    # no client-side rate limit: the collector lists ~70 resources at start
    config = msgspec.structs.replace(client_config_for(server), qps=-1)
    async with ApiClient(config) as client, anyio.create_task_group() as tg:
        factory = SharedInformerFactory(client)
        built = [make(client, factory) for make in runnables]
        await tg.start(factory.run)
        for r in built:
            await tg.start(r.run)
        yield client, built
        tg.cancel_scope.cancel()
