"""``kcm bench``'s load generator: the objects it creates and the updates it makes.

Pods are made never to run anywhere: they name a scheduler nobody runs
(``kcm-bench-no-scheduler``), so on a real cluster they stay Pending and no kubelet pulls an
image. Each is about 2 KB as sent (about 4 KB as stored, with defaults and managedFields), with
labels, annotations, two containers with env, ports, resources and probes. ConfigMaps carry
about 2 KB of data. An update is a merge patch of one annotation, so every update is one
MODIFIED event.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import anyio

from kcm.client import Api, ApiClient, server_preferred_resources
from kcm.errors import AlreadyExists
from kcm.models import ResourceInfo, Unstructured, from_dict
from kcm.models.core_v1 import ConfigMap, Namespace, Pod, ServiceAccount

__all__ = [
    "BUILTIN",
    "UPDATE_ANNOTATION",
    "create_objects",
    "ensure_namespace",
    "resolve",
    "update_objects",
]

UPDATE_ANNOTATION = "bench.kcm.dev/update"
NO_SCHEDULER = "kcm-bench-no-scheduler"
CONCURRENCY = 16


def _pod(i: int) -> dict[str, Any]:
    app = f"web-{i % 50}"
    container = {
        "name": "app",
        "image": f"registry.example/shop/{app}:1.{i % 10}.3",
        "args": ["--port=8080", "--log-level=info"],
        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
        "env": [
            {"name": "MODE", "value": "production"},
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        ],
        "resources": {
            "requests": {"cpu": "100m", "memory": "128Mi"},
            "limits": {"cpu": "500m", "memory": "256Mi"},
        },
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 5},
    }
    sidecar = {
        "name": "proxy",
        "image": "registry.example/mesh/proxy:2.4.1",
        "ports": [{"name": "admin", "containerPort": 15000, "protocol": "TCP"}],
        "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}},
    }
    return {
        "metadata": {
            "name": f"bench-{i:07d}",
            "labels": {"app": app, "tier": "frontend", "app.kubernetes.io/part-of": "shop"},
            "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
        },
        "spec": {
            "schedulerName": NO_SCHEDULER,
            "containers": [container, sidecar],
            "volumes": [{"name": "config", "configMap": {"name": f"{app}-config"}}],
        },
    }


def _config_map(i: int) -> dict[str, Any]:
    return {
        "metadata": {"name": f"bench-{i:07d}", "labels": {"app": f"web-{i % 50}"}},
        "data": {f"key-{k}": f"value-{i}-{k}-" + "x" * 180 for k in range(10)},
    }


BUILTIN: dict[str, tuple[type[Any], Callable[[int], dict[str, Any]]]] = {
    "configmaps": (ConfigMap, _config_map),
    "pods": (Pod, _pod),
}
"""Resources the load generator can create: name -> (model, the i-th object as a dict)."""


async def resolve(client: ApiClient, resource: str, namespace: str | None) -> Api[Any]:
    """The Api for ``pods``, ``configmaps`` or ``group/version/resource`` (``v1/secrets``).

    Raises:
        ValueError: the server serves no such resource.
    """
    if resource in BUILTIN:
        return client.api(BUILTIN[resource][0], namespace)
    *gv, plural = resource.split("/")
    group, version = ("", gv[0]) if len(gv) == 1 else (gv[0], gv[1])
    found = await server_preferred_resources(client)
    for info in found.resources:
        if info.group == group and info.plural == plural:
            break
    else:
        raise ValueError(f"the server serves no resource {resource!r}")
    if info.version != version:
        info = ResourceInfo(
            group=info.group,
            version=version,
            kind=info.kind,
            plural=info.plural,
            namespaced=info.namespaced,
            list_kind=info.list_kind,
        )
    return client.api(Unstructured, namespace if info.namespaced else None, resource=info)


async def ensure_namespace(client: ApiClient, name: str) -> None:
    """Create ``name`` and its ``default`` ServiceAccount (pods need it; nothing else makes it
    when no controller manager runs)."""
    with contextlib.suppress(AlreadyExists):
        await client.api(Namespace).create(from_dict(Namespace, {"metadata": {"name": name}}))
    with contextlib.suppress(AlreadyExists):
        account = from_dict(ServiceAccount, {"metadata": {"name": "default"}})
        await client.api(ServiceAccount, name).create(account)


async def _fan_out(count: int, one: Callable[[int], Any], advance: Callable[[int], None]) -> None:
    """Run ``one(i)`` for every ``i < count``, CONCURRENCY at a time, in order of ``i``."""
    next_i = 0

    async def worker() -> None:
        nonlocal next_i
        while next_i < count:
            i, next_i = next_i, next_i + 1
            await one(i)
            advance(1)

    async with anyio.create_task_group() as tg:
        for _ in range(min(CONCURRENCY, count)):
            tg.start_soon(worker)


async def create_objects(
    api: Api[Any], resource: str, count: int, advance: Callable[[int], None]
) -> None:
    """Create ``count`` objects of a :data:`BUILTIN` resource (``advance(1)`` after each)."""
    model, make = BUILTIN[resource]

    async def one(i: int) -> None:
        await api.create(from_dict(model, make(i)))

    await _fan_out(count, one, advance)


async def update_objects(
    api: Api[Any], objects: int, count: int, advance: Callable[[int], None]
) -> None:
    """``count`` merge patches, round robin over the ``objects`` created (one event each)."""

    async def one(k: int) -> None:
        body = {"metadata": {"annotations": {UPDATE_ANNOTATION: str(k)}}}
        await api.patch(f"bench-{k % objects:07d}", body)

    await _fan_out(count, one, advance)
