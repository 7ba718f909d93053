"""(apiVersion, kind) -> ResourceInfo: built-ins from the models, the rest from the server.

The server's discovery documents (``GET /api/v1``, ``GET /apis/<group>/<version>``, each an
``APIResourceList``) are fetched per group version on first use and cached. A kind missing from
the cache triggers one refetch of its group version, so a CRD installed after the first lookup is
found without restarting the client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from kcm.errors import DecodeError, NotFound

if TYPE_CHECKING:
    from kcm.models import ResourceInfo

    from ._client import ApiClient

__all__ = ["Discovery", "builtin_resource", "resource_list_to_infos"]

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
    from kcm.models import ResourceInfo

    group, _, version = api_version.rpartition("/")
    entries = [r for r in doc.get("resources") or [] if isinstance(r, dict) and r.get("name")]
    subresources: dict[str, list[str]] = {}
    for r in entries:
        name = str(r["name"])
        if "/" in name:
            parent, _, sub = name.partition("/")
            subresources.setdefault(parent, []).append(sub)
    infos: dict[str, ResourceInfo] = {}
    for r in entries:
        name = str(r["name"])
        if "/" in name or not r.get("kind"):
            continue
        kind = str(r["kind"])
        infos.setdefault(
            kind,
            ResourceInfo(
                group=str(r.get("group") or group),
                version=str(r.get("version") or version),
                kind=kind,
                plural=name,
                namespaced=bool(r.get("namespaced", False)),
                list_kind=f"{kind}List",
                subresources=frozenset(subresources.get(name, ())),
                short_names=tuple(r.get("shortNames") or ()),
                verbs=tuple(r.get("verbs") or ()),
            ),
        )
    return infos


def _discovery_path(api_version: str) -> str:
    return f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"


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
            _, body = await self._client._request("GET", _discovery_path(api_version))
        except NotFound as exc:
            raise NotFound(
                f"the server does not serve API version {api_version!r}; is the CRD installed?",
                code=404,
                reason="NotFound",
                status=exc.status,
            ) from exc
        try:
            doc = _list_decoder.decode(body)
        except msgspec.DecodeError as exc:
            raise DecodeError(f"discovery document for {api_version} is not JSON: {exc}") from exc
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
