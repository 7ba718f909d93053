"""``Api[T]``: typed verbs for one kind (get, list, watch, create, replace, update, patch, apply,
delete, status and scale subresources).

Namespaces: a namespaced kind's single-object verbs use the object's namespace, else the
handle's, else ``ClientConfig.namespace``. ``list``/``list_all``/``watch`` use the handle's
namespace and span **all namespaces** when the handle has none (informers rely on this).
``delete_collection`` needs a namespace (handle's, else the config default). Cluster-scoped kinds
ignore namespaces.

Decoders (``T``, ``ObjectList[T]``, ``WatchEvent[T]``) are built once per type and cached.
"""

from __future__ import annotations

import builtins
import enum
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, Generic, TypeVar, cast

import anyio
import msgspec

from kcm.clock import SystemClock
from kcm.errors import DecodeError
from kcm.models import (
    K8sStruct,
    ObjectList,
    PartialObjectMetadata,
    ResourceInfo,
    Status,
    WatchEvent,
    decoder,
    encode,
    resource_info_for,
)
from kcm.models.autoscaling_v1 import Scale
from kcm.models.meta_v1 import ListMeta

from ._jsonpatch import json_patch
from ._watch import WatchStream

__all__ = ["Api", "PatchType"]

T = TypeVar("T")

_json_decoder = msgspec.json.Decoder(dict[str, Any])
_status_decoder = msgspec.json.Decoder(dict[str, Any])
_METADATA = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
_METADATA_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
"""What client-go's metadata client asks for (without its protobuf first choice): the
metadata only, or the whole object from a server that cannot convert."""
_WATCH = {"Accept-Encoding": "identity"}


class PatchType(enum.StrEnum):
    """The patch formats the API server accepts (the value is the ``Content-Type``)."""

    JSON = "application/json-patch+json"
    """RFC 6902 list of operations."""
    MERGE = "application/merge-patch+json"
    """RFC 7386 merge patch: ``null`` deletes a key, lists are replaced whole."""
    STRATEGIC = "application/strategic-merge-patch+json"
    """Kubernetes strategic merge patch (built-in kinds only): lists merged by key."""
    APPLY = "application/apply-patch+yaml"
    """Server-side apply (needs ``field_manager``)."""


def _opt(params: dict[str, str], key: str, value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool):
        params[key] = "true" if value else "false"
    else:
        params[key] = str(value)


def _write_params(
    *, dry_run: bool, field_manager: str | None, force: bool | None = None
) -> dict[str, str]:
    params: dict[str, str] = {}
    if dry_run:
        params["dryRun"] = "All"
    _opt(params, "fieldManager", field_manager)
    _opt(params, "force", force)
    return params


def _wire(obj: Any) -> dict[str, Any]:
    """An object as the exact JSON dict it is sent as."""
    value = _json_decoder.decode(encode(obj))
    return value


def _changed_parts_patch(old: Any, new: Any) -> builtins.list[dict[str, Any]] | None:
    """The JSON patch from ``old`` to ``new`` computed on their changed top-level parts only,
    or None when that shortcut does not apply.

    A controller's new object is the old one with a part replaced (``status``, or ``metadata``
    with one annotation more), so every other part is the very same object and encodes the
    same. Encoding and diffing only the parts that are not identical gives the patch the whole
    diff would (same operations, same order: struct fields encode in order), at a fraction of
    the cost. It applies when every part either is identical or, on both sides, a nested model
    (present in both encodings, untagged, so it encodes alone as it does inside the object).
    """
    tp = type(old)
    if type(new) is not tp or not isinstance(old, msgspec.Struct):
        return None
    ops: builtins.list[dict[str, Any]] = []
    for name, wire_name in zip(tp.__struct_fields__, tp.__struct_encode_fields__, strict=True):
        a = getattr(old, name)
        b = getattr(new, name)
        if a is b:
            continue
        part = type(a)
        if (
            type(b) is not part
            or not isinstance(a, msgspec.Struct)
            or part.__struct_config__.tag is not None
        ):
            return None
        ops += json_patch(_wire(a), _wire(b), f"/{wire_name}")
    return ops


def _body_bytes(body: Any) -> bytes:
    if isinstance(body, bytes | bytearray | memoryview):
        return bytes(body)
    if isinstance(body, str):
        return body.encode()
    if isinstance(body, dict | list):
        return msgspec.json.encode(body)
    return encode(body)


class _MetadataList(K8sStruct, frozen=True):
    """A ``PartialObjectMetadataList`` as kube-apiserver sends it: an empty one's ``items``
    are ``null`` (Go's nil slice)."""

    api_version: str | None = None
    kind: str | None = None
    metadata: ListMeta = msgspec.field(default_factory=ListMeta)
    items: list[PartialObjectMetadata] | None = None


_metadata_list_decoder = decoder(_MetadataList)


def _metadata_list(data: bytes) -> ObjectList[PartialObjectMetadata]:
    got = _metadata_list_decoder.decode(data)
    return ObjectList(
        api_version=got.api_version, kind=got.kind, metadata=got.metadata, items=got.items or []
    )


class Api(Generic[T]):
    """Typed access to one kind; get one with :meth:`kcm.client.ApiClient.api`.

    Every method raises, besides what it lists: :class:`kcm.errors.ApiError` subclasses for the
    server's failure Status (``NotFound``, ``Conflict``, ``Invalid``...),
    :class:`kcm.errors.TransportError`/``RequestTimeout`` when the server cannot be reached
    (reads are retried first), and :class:`kcm.errors.DecodeError` when a body does not match
    ``T``.
    """

    def __init__(
        self,
        client: Any,
        model: type[T],
        *,
        namespace: str | None = None,
        resource: ResourceInfo | None = None,
    ) -> None:
        if resource is None:
            try:
                resource = resource_info_for(model)
            except (KeyError, LookupError, AttributeError) as exc:
                raise ValueError(
                    f"{model.__name__} has no ResourceInfo; pass resource= "
                    "(await client.discover(api_version, kind) finds it)"
                ) from exc
        self._client = client
        self.model = model
        self.resource: ResourceInfo = resource
        self.namespace = namespace if resource.namespaced else None
        self._decoder = decoder(cast(Any, model))
        self._list_decoder = decoder(ObjectList[model])  # type: ignore[valid-type]
        self._event_decoder = decoder(WatchEvent[model])  # type: ignore[valid-type]
        metadata_only = model is PartialObjectMetadata
        self._get_headers = {"Accept": _METADATA} if metadata_only else None
        self._list_headers = {"Accept": _METADATA_LIST} if metadata_only else None
        self._watch_headers = {**_WATCH, "Accept": _METADATA} if metadata_only else _WATCH

    def __repr__(self) -> str:
        return (
            f"Api({self.model.__name__}, {self.resource.api_version}/{self.resource.plural}, "
            f"namespace={self.namespace!r})"
        )

    # ------------------------------------------------------------------ helpers

    def _ns_for(self, obj: Any = None) -> str | None:
        if not self.resource.namespaced:
            return None
        obj_ns = getattr(getattr(obj, "metadata", None), "namespace", None) if obj else None
        if obj_ns and self.namespace and obj_ns != self.namespace:
            raise ValueError(
                f"object namespace {obj_ns!r} differs from the Api handle's {self.namespace!r}"
            )
        return obj_ns or self.namespace or self._client.config.namespace

    def _path(self, name: str | None = None, *, obj: Any = None, sub: str | None = None) -> str:
        return self.resource.path(namespace=self._ns_for(obj), name=name, subresource=sub)

    def _collection_path(self) -> str:
        return self.resource.path(namespace=self.namespace)

    @staticmethod
    def _name(obj: Any) -> str:
        name = getattr(getattr(obj, "metadata", None), "name", None)
        if not name:
            raise ValueError("the object has no metadata.name")
        return str(name)

    def _decode(self, data: bytes) -> T:
        try:
            return self._decoder.decode(data)  # type: ignore[no-any-return]
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise DecodeError(f"response is not a valid {self.resource.kind}: {exc}") from exc

    def _decode_or_status(self, data: bytes) -> T | Status:
        try:
            head = _status_decoder.decode(data)
        except msgspec.DecodeError as exc:
            raise DecodeError(f"response is not JSON: {exc}") from exc
        if head.get("kind") == "Status":
            return msgspec.convert(head, Status)
        return self._decode(data)

    async def _send(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: bytes | None = None,
        content_type: str = "application/json",
        headers: Mapping[str, str] | None = None,
    ) -> bytes:
        if body is not None and content_type != "application/json":
            headers = {**(headers or {}), "Content-Type": content_type}
        _, data = await self._client._request(
            method, path, params=params, content=body, headers=headers
        )
        return data  # type: ignore[no-any-return]

    # ------------------------------------------------------------------ reads

    async def get(self, name: str) -> T:
        """Read one object. Raises ``NotFound`` if it does not exist. Retried on failure."""
        return self._decode(await self._send("GET", self._path(name), headers=self._get_headers))

    def _list_params(
        self,
        *,
        label_selector: object | None,
        field_selector: object | None,
        limit: int | None,
        continue_: str | None,
        resource_version: str | None,
        resource_version_match: str | None,
        timeout_seconds: int | None,
    ) -> dict[str, str]:
        params: dict[str, str] = {}
        _opt(params, "labelSelector", str(label_selector) if label_selector is not None else None)
        _opt(params, "fieldSelector", str(field_selector) if field_selector is not None else None)
        _opt(params, "limit", limit)
        _opt(params, "continue", continue_)
        _opt(params, "resourceVersion", resource_version)
        _opt(params, "resourceVersionMatch", resource_version_match)
        _opt(params, "timeoutSeconds", timeout_seconds)
        return params

    async def list(
        self,
        *,
        label_selector: object | None = None,
        field_selector: object | None = None,
        limit: int | None = None,
        continue_: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        timeout_seconds: int | None = None,
    ) -> ObjectList[T]:
        """One page of objects (all of them without ``limit``).

        Args:
            label_selector / field_selector: strings or selector objects (``str()`` is sent).
            limit / continue_: pagination; ``result.metadata.continue_`` is the next token.
            resource_version / resource_version_match: the consistency of the read
                (``"0"`` + ``NotOlderThan`` serves from the watch cache).

        Raises:
            ResourceExpired: the continue token expired; start the list again.
        """
        params = self._list_params(
            label_selector=label_selector,
            field_selector=field_selector,
            limit=limit,
            continue_=continue_,
            resource_version=resource_version,
            resource_version_match=resource_version_match,
            timeout_seconds=timeout_seconds,
        )
        path = self._collection_path()
        data = await self._send("GET", path, params=params, headers=self._list_headers)
        try:
            if self._list_headers is not None:
                return cast(ObjectList[T], _metadata_list(data))
            return self._list_decoder.decode(data)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise DecodeError(f"response is not a valid {self.resource.list_kind}: {exc}") from exc

    async def list_all(
        self,
        *,
        label_selector: object | None = None,
        field_selector: object | None = None,
        page_size: int = 500,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
    ) -> AsyncIterator[T]:
        """Every object, page by page (``limit=page_size``, following ``continue``).

        Caveats:
            Pages are consistent with each other (one snapshot) only while the continue token
            is valid; an expired token raises ``ResourceExpired`` midway.
        """
        token: str | None = None
        while True:
            page = await self.list(
                label_selector=label_selector,
                field_selector=field_selector,
                limit=page_size,
                continue_=token,
                resource_version=resource_version if token is None else None,
                resource_version_match=resource_version_match if token is None else None,
            )
            for item in page.items:
                yield item
            token = page.metadata.continue_ if page.metadata is not None else None
            if not token:
                return

    @asynccontextmanager
    async def watch(
        self,
        *,
        label_selector: object | None = None,
        field_selector: object | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        timeout_seconds: int | None = None,
        allow_watch_bookmarks: bool = True,
        send_initial_events: bool | None = None,
        idle_timeout: float | None = None,
    ) -> AsyncIterator[AsyncIterator[WatchEvent[T]]]:
        """Watch for changes: ``async with api.watch(...) as events: async for ev in events``.

        Args:
            resource_version: start after this version (``None``: synthetic ADDED events for
                the current state first).
            timeout_seconds: the server ends the stream after this long (the iteration then
                ends normally; start a new watch from the last seen version).
            allow_watch_bookmarks: ask for BOOKMARK events (they are yielded).
            send_initial_events: streaming list (KEP-3157); needs ``resource_version_match``
                ``NotOlderThan``.
            idle_timeout: seconds without any byte before ``RequestTimeout`` (default
                ``ClientConfig.watch_idle_timeout``).

        Raises:
            ResourceExpired: (from the iteration) the version is too old (410); relist.
            ApiError: any other ERROR event, as its typed error.
            WatchDecodeError: a malformed line (never skipped).
            RequestTimeout: the idle watchdog fired.

        Guarantees:
            Not retried by the client: the reflector owns the retry/relist loop.
        """
        params = self._list_params(
            label_selector=label_selector,
            field_selector=field_selector,
            limit=None,
            continue_=None,
            resource_version=resource_version,
            resource_version_match=resource_version_match,
            timeout_seconds=timeout_seconds,
        )
        params["watch"] = "true"
        if allow_watch_bookmarks:
            params["allowWatchBookmarks"] = "true"
        _opt(params, "sendInitialEvents", send_initial_events)
        client = self._client
        idle = client.config.watch_idle_timeout if idle_timeout is None else idle_timeout
        # On the real clock the transport enforces the idle timeout as its per-read timeout
        # (one timer it re-arms on every read); a cancel scope per read cost ~5 µs per event.
        # Any other clock (tests) needs the stream's own scope, which that clock drives.
        by_transport = isinstance(client.clock, SystemClock)
        async with client.stream(
            "GET",
            self._collection_path(),
            params=params,
            headers=self._watch_headers,
            read_timeout=idle if by_transport else None,
            header_timeout=idle,
        ) as response:
            stream: WatchStream[WatchEvent[T]] = WatchStream(
                response,
                self._event_decoder.decode,
                server=client.config.server,
                clock=client.clock,
                idle_timeout=idle,
                idle_timeout_by_transport=by_transport,
            )
            try:
                yield stream
            finally:
                with anyio.CancelScope(shield=True):
                    await stream.aclose()

    # ------------------------------------------------------------------ writes

    async def create(self, obj: T, *, dry_run: bool = False, field_manager: str | None = None) -> T:
        """Create ``obj`` (POST). Raises ``AlreadyExists``, ``Invalid``. Not retried."""
        params = _write_params(dry_run=dry_run, field_manager=field_manager)
        data = await self._send("POST", self._path(obj=obj), params=params, body=encode(obj))
        return self._decode(data)

    async def replace(
        self, obj: T, *, dry_run: bool = False, field_manager: str | None = None
    ) -> T:
        """Replace ``obj`` whole (PUT with its ``resourceVersion``).

        Caveats:
            Fields the model does not know are dropped on decode, so a PUT of a decoded object
            erases them on the server. Prefer :meth:`update` or :meth:`apply`.

        Raises:
            Conflict: the object changed since ``obj`` was read.
        """
        params = _write_params(dry_run=dry_run, field_manager=field_manager)
        data = await self._send(
            "PUT", self._path(self._name(obj), obj=obj), params=params, body=encode(obj)
        )
        return self._decode(data)

    def update_patch(self, old: T, new: T) -> builtins.list[dict[str, Any]]:
        """The JSON patch :meth:`update` sends (see there)."""
        ops = _changed_parts_patch(old, new)
        if ops is None:
            before, after = _wire(old), _wire(new)
            ops = json_patch(before, after)
            rv = (before.get("metadata") or {}).get("resourceVersion")
        else:
            metadata = getattr(old, "metadata", None)
            rv = getattr(metadata, "resource_version", None)
        if rv is not None:
            # ``replace``, not ``test``: the patched object then carries old's resourceVersion and
            # the server's optimistic-concurrency check answers 409 Conflict when it is stale,
            # where a failed ``test`` would be a 422 that callers could not tell from bad input.
            ops.insert(0, {"op": "replace", "path": "/metadata/resourceVersion", "value": rv})
        return ops

    async def update(
        self,
        old: T,
        new: T,
        *,
        dry_run: bool = False,
        field_manager: str | None = None,
        subresource: str | None = None,
    ) -> T:
        """Write the change from ``old`` to ``new`` as an RFC 6902 JSON patch.

        The patch is computed between the encodings of the two objects, preceded by setting
        ``/metadata/resourceVersion`` to ``old``'s, so the server rejects the write with 409
        Conflict if the object changed since ``old`` was read (optimistic concurrency). Fields
        the model does not know are absent from both encodings and therefore never touched: the
        server keeps them (a PUT would erase them). Objects are diffed key by key; lists of equal
        length index by index; a list whose length changed is replaced whole. When nothing
        changed no request is sent and ``new`` is returned.

        Raises:
            Conflict: (409) the object changed since ``old`` was read; re-read and retry.
            Invalid: (422) the result is invalid.
        """
        ops = self.update_patch(old, new)
        if len(ops) <= 1 and not subresource:
            return new
        return await self.patch(
            self._name(new),
            ops,
            patch_type=PatchType.JSON,
            field_manager=field_manager,
            dry_run=dry_run,
            subresource=subresource,
            _obj=new,
        )

    async def patch(
        self,
        name: str,
        body: Any,
        *,
        patch_type: PatchType = PatchType.MERGE,
        field_manager: str | None = None,
        force: bool | None = None,
        dry_run: bool = False,
        subresource: str | None = None,
        _obj: Any = None,
    ) -> T:
        """Patch an object (``body``: dict/list, a model object, or raw bytes).

        Raises:
            Conflict: (APPLY) another manager owns a field; pass ``force=True`` to take it.
        """
        params = _write_params(dry_run=dry_run, field_manager=field_manager, force=force)
        data = await self._send(
            "PATCH",
            self._path(name, obj=_obj, sub=subresource),
            params=params,
            body=_body_bytes(body),
            content_type=str(patch_type),
        )
        return self._decode(data)

    async def apply(
        self, obj: T, *, field_manager: str, force: bool = False, dry_run: bool = False
    ) -> T:
        """Server-side apply ``obj`` as ``field_manager`` (creates it if missing).

        ``metadata.managedFields`` is stripped from the body (the server rejects it).

        Raises:
            Conflict: another manager owns a field you set; ``force=True`` takes it over.
        """
        body = _wire(obj)
        meta = body.get("metadata")
        if isinstance(meta, dict):
            meta.pop("managedFields", None)
        return await self.patch(
            self._name(obj),
            body,
            patch_type=PatchType.APPLY,
            field_manager=field_manager,
            force=force,
            dry_run=dry_run,
            _obj=obj,
        )

    @staticmethod
    def _delete_body(
        propagation_policy: str | None,
        preconditions: Any,
        grace_period_seconds: int | None,
        dry_run: bool,
    ) -> bytes:
        opts: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if propagation_policy is not None:
            opts["propagationPolicy"] = str(propagation_policy)
        if grace_period_seconds is not None:
            opts["gracePeriodSeconds"] = grace_period_seconds
        if dry_run:
            opts["dryRun"] = ["All"]
        if preconditions is not None:
            if not isinstance(preconditions, Mapping):
                preconditions = _json_decoder.decode(msgspec.json.encode(preconditions))
            opts["preconditions"] = {k: v for k, v in preconditions.items() if v is not None}
        return msgspec.json.encode(opts)

    async def delete(
        self,
        name: str,
        *,
        propagation_policy: str | None = None,
        preconditions: Any = None,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
    ) -> T | Status:
        """Delete an object.

        Args:
            propagation_policy: ``"Foreground"``, ``"Background"`` or ``"Orphan"``.
            preconditions: ``{"uid": ..., "resourceVersion": ...}`` (or a Preconditions model):
                delete only that incarnation/version.

        Returns:
            The object (still present while finalizers or graceful deletion run), or the
            success ``Status`` once it is gone.

        Raises:
            NotFound: no such object. Conflict: a precondition failed.
        """
        data = await self._send(
            "DELETE",
            self._path(name),
            body=self._delete_body(
                propagation_policy, preconditions, grace_period_seconds, dry_run
            ),
        )
        return self._decode_or_status(data)

    async def delete_collection(
        self,
        *,
        label_selector: object | None = None,
        field_selector: object | None = None,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
    ) -> ObjectList[T] | Status:
        """Delete every matching object in the namespace (handle's, else the config's)."""
        params = self._list_params(
            label_selector=label_selector,
            field_selector=field_selector,
            limit=None,
            continue_=None,
            resource_version=None,
            resource_version_match=None,
            timeout_seconds=None,
        )
        path = self.resource.path(namespace=self._ns_for(None))
        data = await self._send(
            "DELETE",
            path,
            params=params,
            body=self._delete_body(propagation_policy, None, grace_period_seconds, dry_run),
        )
        head = _status_decoder.decode(data)
        if head.get("kind") == "Status":
            return msgspec.convert(head, Status)
        return self._list_decoder.decode(data)

    # ------------------------------------------------------------------ subresources

    async def get_status(self, name: str) -> T:
        """Read the ``status`` subresource (the whole object)."""
        return self._decode(await self._send("GET", self._path(name, sub="status")))

    async def replace_status(
        self, obj: T, *, dry_run: bool = False, field_manager: str | None = None
    ) -> T:
        """PUT the ``status`` subresource (only ``status`` changes; resourceVersion checked)."""
        params = _write_params(dry_run=dry_run, field_manager=field_manager)
        data = await self._send(
            "PUT",
            self._path(self._name(obj), obj=obj, sub="status"),
            params=params,
            body=encode(obj),
        )
        return self._decode(data)

    async def patch_status(
        self,
        name: str,
        body: Any,
        *,
        patch_type: PatchType = PatchType.MERGE,
        field_manager: str | None = None,
        force: bool | None = None,
        dry_run: bool = False,
    ) -> T:
        """Patch the ``status`` subresource."""
        return await self.patch(
            name,
            body,
            patch_type=patch_type,
            field_manager=field_manager,
            force=force,
            dry_run=dry_run,
            subresource="status",
        )

    async def get_scale(self, name: str) -> Scale:
        """Read the ``scale`` subresource (autoscaling/v1 Scale)."""
        return _decode_scale(await self._send("GET", self._path(name, sub="scale")))

    async def replace_scale(
        self, name: str, scale: Scale, *, dry_run: bool = False, field_manager: str | None = None
    ) -> Scale:
        """PUT the ``scale`` subresource."""
        params = _write_params(dry_run=dry_run, field_manager=field_manager)
        data = await self._send(
            "PUT", self._path(name, sub="scale"), params=params, body=encode(scale)
        )
        return _decode_scale(data)

    async def patch_scale(
        self,
        name: str,
        body: Any,
        *,
        patch_type: PatchType = PatchType.MERGE,
        field_manager: str | None = None,
        dry_run: bool = False,
    ) -> Scale:
        """Patch the ``scale`` subresource, e.g. ``{"spec": {"replicas": 3}}``."""
        params = _write_params(dry_run=dry_run, field_manager=field_manager)
        data = await self._send(
            "PATCH",
            self._path(name, sub="scale"),
            params=params,
            body=_body_bytes(body),
            content_type=str(patch_type),
        )
        return _decode_scale(data)


def _decode_scale(data: bytes) -> Scale:
    try:
        return decoder(Scale).decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise DecodeError(f"response is not a valid Scale: {exc}") from exc
