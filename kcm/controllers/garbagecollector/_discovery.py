"""Server-wide discovery: every resource the server serves, one version per group resource.

client-go's ``ServerPreferredResources``: for each group, the preferred version first, then
the others; a resource (group + plural) is taken from the first version that serves it.
Subresources (``pods/status``) are skipped. Used by the garbage collector (what to monitor)
and the namespace controller (what to delete).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import anyio

from kcm.client import ApiClient
from kcm.errors import KcmError
from kcm.models import ResourceInfo

__all__ = ["DiscoveryResult", "discover_resources", "filter_verbs"]


class DiscoveryResult:
    """What discovery found, and which group versions failed.

    Attributes:
        resources: one :class:`ResourceInfo` per group resource, in discovery order.
        failed: ``group/version`` -> error message for group versions that could not be read.
    """

    __slots__ = ("failed", "resources")

    def __init__(self, resources: list[ResourceInfo], failed: dict[str, str]) -> None:
        self.resources = resources
        self.failed = failed


def _infos(api_version: str, doc: Mapping[str, Any]) -> list[ResourceInfo]:
    group, _, version = api_version.rpartition("/")
    out: list[ResourceInfo] = []
    for r in doc.get("resources") or ():
        if not isinstance(r, dict):
            continue
        name = str(r.get("name") or "")
        if not name or "/" in name or not r.get("kind"):
            continue
        kind = str(r["kind"])
        out.append(
            ResourceInfo(
                group=str(r.get("group") or group),
                version=str(r.get("version") or version),
                kind=kind,
                plural=name,
                namespaced=bool(r.get("namespaced", False)),
                list_kind=f"{kind}List",
                short_names=tuple(r.get("shortNames") or ()),
                verbs=tuple(str(v) for v in r.get("verbs") or ()),
            )
        )
    return out


async def discover_resources(client: ApiClient) -> DiscoveryResult:
    """Every resource the server serves (``GET /api``, ``/apis`` and each group version).

    Group versions are fetched concurrently; one that fails is reported in
    :attr:`DiscoveryResult.failed` and the others are still returned.

    Raises:
        kcm.errors.ApiError, kcm.errors.TransportError: ``/api`` or ``/apis`` itself failed.
    """
    core = (await client.request("GET", "/api")).json()
    groups = (await client.request("GET", "/apis")).json()
    ordered: list[str] = [str(v) for v in core.get("versions") or ()]
    for g in groups.get("groups") or ():
        name = str(g.get("name") or "")
        preferred = str((g.get("preferredVersion") or {}).get("groupVersion") or "")
        versions = [str(v.get("groupVersion")) for v in g.get("versions") or ()]
        if preferred:
            ordered.append(preferred)
        ordered.extend(v for v in versions if v != preferred and v.startswith(name + "/"))
    docs: dict[str, list[ResourceInfo]] = {}
    failed: dict[str, str] = {}

    async def fetch(api_version: str) -> None:
        path = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
        try:
            docs[api_version] = _infos(api_version, (await client.request("GET", path)).json())
        except (KcmError, ValueError) as exc:
            failed[api_version] = str(exc) or type(exc).__name__

    async with anyio.create_task_group() as tg:
        for api_version in ordered:
            tg.start_soon(fetch, api_version)
    seen: set[tuple[str, str]] = set()
    resources: list[ResourceInfo] = []
    for api_version in ordered:
        for info in docs.get(api_version, ()):
            key = (info.group, info.plural)
            if key not in seen:
                seen.add(key)
                resources.append(info)
    return DiscoveryResult(resources, failed)


def filter_verbs(resources: Iterable[ResourceInfo], *verbs: str) -> list[ResourceInfo]:
    """The resources that support every one of ``verbs``."""
    return [r for r in resources if all(v in r.verbs for v in verbs)]
