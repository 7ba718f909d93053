"""Discovery: (apiVersion, kind) -> ResourceInfo, and every resource the server serves.

:class:`Discovery` (behind :meth:`ApiClient.discover`) resolves one kind: built-ins from the
models, the rest from the server's discovery documents (``GET /api/v1``,
``GET /apis/<group>/<version>``, each an ``APIResourceList``), fetched per group version on
first use and cached. A kind missing from the cache triggers one refetch of its group version,
so a CRD installed after the first lookup is found without restarting the client.

:func:`server_preferred_resources` is client-go's ``ServerPreferredResources``: one
server-wide pass over ``/api``, ``/apis`` and every group version, for controllers that act on
every kind (the garbage collector, the namespace controller).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from kcm.errors import DecodeError, KcmError, NotFound

if TYPE_CHECKING:
    from kcm.models import ResourceInfo

    from ._client import ApiClient

__all__ = [
    "Discovery",
    "DiscoveryResult",
    "builtin_resource",
    "resource_list_to_infos",
    "server_preferred_resources",
]

_list_decoder = msgspec.json.Decoder(dict[str, Any])


def builtin_resource(api_version: str, kind: str) -> ResourceInfo | None:
    """The built-in :class:`ResourceInfo` for a kind the models know, else None."""
    from kcm.models import model_for, resource_info_for

    try:
        model = model_for(api_version, kind)
    except (KeyError, LookupError, ValueError):
        return None
    if model is None:
        return None
    try:
        return resource_info_for(model)
    except (KeyError, LookupError, ValueError, AttributeError):
        return None


def resource_list_to_infos(api_version: str, doc: dict[str, Any]) -> dict[str, ResourceInfo]:
    """Kind -> ResourceInfo for one ``APIResourceList`` (subresources folded into their parent)."""
    infos: dict[str, ResourceInfo] = {}
    for info in _resource_infos(api_version, doc):
        infos.setdefault(info.kind, info)
    return infos


def _resource_infos(api_version: str, doc: Mapping[str, Any]) -> list[ResourceInfo]:
    """One ResourceInfo per top-level resource of an ``APIResourceList``, in document order
    (subresources such as ``pods/status`` folded into their parent's ``subresources``)."""
    from kcm.models import ResourceInfo

    group, _, version = api_version.rpartition("/")
    entries = [r for r in doc.get("resources") or [] if isinstance(r, dict) and r.get("name")]
    subresources: dict[str, list[str]] = {}
    for r in entries:
        name = str(r["name"])
        if "/" in name:
            parent, _, sub = name.partition("/")
            subresources.setdefault(parent, []).append(sub)
    infos: list[ResourceInfo] = []
    for r in entries:
        name = str(r["name"])
        if "/" in name or not r.get("kind"):
            continue
        kind = str(r["kind"])
        infos.append(
            ResourceInfo(
                group=str(r.get("group") or group),
                version=str(r.get("version") or version),
                kind=kind,
                plural=name,
                namespaced=bool(r.get("namespaced", False)),
                list_kind=f"{kind}List",
                subresources=frozenset(subresources.get(name, ())),
                short_names=tuple(r.get("shortNames") or ()),
                verbs=tuple(str(v) for v in r.get("verbs") or ()),
            ),
        )
    return infos


def _discovery_path(api_version: str) -> str:
    return f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"


async def _get_json(client: ApiClient, path: str, what: str | None = None) -> dict[str, Any]:
    """GET a discovery document (``what`` names it in errors; default: the path)."""
    _, body = await client._request("GET", path)
    try:
        return _list_decoder.decode(body)
    except msgspec.DecodeError as exc:
        raise DecodeError(f"discovery document for {what or path} is not JSON: {exc}") from exc


class Discovery:
    """The per-client discovery cache (see the module docstring)."""

    def __init__(self, client: ApiClient) -> None:
        self._client = client
        self._cache: dict[str, dict[str, ResourceInfo]] = {}

    def invalidate(self) -> None:
        """Forget everything fetched so far."""
        self._cache.clear()

    async def _fetch(self, api_version: str) -> dict[str, ResourceInfo]:
        try:
            doc = await _get_json(self._client, _discovery_path(api_version), api_version)
        except NotFound as exc:
            raise NotFound(
                f"the server does not serve API version {api_version!r}; is the CRD installed?",
                code=404,
                reason="NotFound",
                status=exc.status,
            ) from exc
        infos = resource_list_to_infos(api_version, doc)
        self._cache[api_version] = infos
        return infos

    async def resource(self, api_version: str, kind: str) -> ResourceInfo:
        builtin = builtin_resource(api_version, kind)
        if builtin is not None:
            return builtin
        cached = self._cache.get(api_version)
        if cached is not None and kind in cached:
            return cached[kind]
        infos = await self._fetch(api_version)
        if kind not in infos:
            raise NotFound(
                f"the server serves no kind {kind!r} in {api_version!r} "
                f"(it has: {', '.join(sorted(infos)) or 'none'})",
                code=404,
                reason="NotFound",
            )
        return infos[kind]


# -- server-wide discovery ----------------------------------------------------------------------


class DiscoveryResult:
    """What :func:`server_preferred_resources` found, and which group versions failed.

    Attributes:
        resources: one :class:`~kcm.models.ResourceInfo` per group resource (group + plural),
            in discovery order: the core group first, then each group's preferred version.
        failed: ``group/version`` (``v1`` for the core group) -> error message, for group
            versions whose document could not be read. Their resources are missing from
            :attr:`resources` unless another version of the same group served them.
    """

    __slots__ = ("failed", "resources")

    def __init__(self, resources: list[ResourceInfo], failed: dict[str, str]) -> None:
        self.resources = resources
        self.failed = failed

    def __repr__(self) -> str:
        return f"<DiscoveryResult resources={len(self.resources)} failed={sorted(self.failed)}>"


async def server_preferred_resources(client: ApiClient) -> DiscoveryResult:
    """Every resource the server serves, one version per group resource (client-go's
    ``ServerPreferredResources``).

    Reads ``GET /api`` and ``GET /apis``, then every group version's ``APIResourceList``
    concurrently. Within a group the preferred version comes first, then the others in the
    server's order; a resource (group + plural) is taken from the first version that serves
    it, so a resource only served by a non-preferred version is still found. Subresources
    (``pods/status``) are folded into their parent's ``subresources``. Nothing is cached:
    each call is a fresh pass (CRDs come and go).

    Usage::

        found = await server_preferred_resources(client)
        deletable = [r for r in found.resources if "delete" in r.verbs]
        if found.failed:
            ...  # some group versions could not be read (an aggregated API is down)

    Returns:
        A :class:`DiscoveryResult`; a group version that fails (an aggregated API server
        that is down, a document that is not JSON) is reported in ``failed`` and the others
        are still returned (client-go's ``ErrGroupDiscoveryFailed``).

    Raises:
        ApiError, TransportError: ``/api`` or ``/apis`` itself failed (after the client's
            retries); retry later.
        DecodeError: ``/api`` or ``/apis`` did not answer a JSON object.
    """
    core = await _get_json(client, "/api")
    groups = await _get_json(client, "/apis")
    ordered: list[str] = [str(v) for v in core.get("versions") or ()]
    for g in groups.get("groups") or ():
        if not isinstance(g, dict):
            continue
        name = str(g.get("name") or "")
        preferred = str((g.get("preferredVersion") or {}).get("groupVersion") or "")
        versions = [
            str(v.get("groupVersion")) for v in g.get("versions") or () if isinstance(v, dict)
        ]
        if preferred:
            ordered.append(preferred)
        ordered.extend(v for v in versions if v != preferred and v.startswith(name + "/"))
    docs: dict[str, list[ResourceInfo]] = {}
    failed: dict[str, str] = {}

    async def fetch(api_version: str) -> None:
        try:
            doc = await _get_json(client, _discovery_path(api_version))
        except KcmError as exc:
            failed[api_version] = str(exc) or type(exc).__name__
            return
        docs[api_version] = _resource_infos(api_version, doc)

    async with anyio.create_task_group() as tg:
        for api_version in dict.fromkeys(ordered):
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
