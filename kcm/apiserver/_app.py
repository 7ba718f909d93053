"""The ASGI application: authentication, routing, request decoding, and the verbs over HTTP.

A raw ASGI app (no framework): the Kubernetes URL scheme needs its own routing anyway, and raw
ASGI lets a watch response stream lines straight from the watcher's memory stream. A request
goes through :meth:`App.__call__` (auth, injected faults, errors as Status), ``_dispatch``
(non-resource paths, discovery, then the resource :class:`~._routing.Target`), and one verb
handler chosen by method and target.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

import msgspec

from kcm.clock import Clock

from ._body import decode_object
from ._discovery import Discovery
from ._faults import Faults
from ._field_validation import check_field_validation
from ._http import Receive, Scope, Send, authorized, decode_body, read_body, respond
from ._protobuf import UnsupportedProtobuf, decode_protobuf
from ._rest import Rest
from ._routing import ApiPath, Target, not_found, resolve
from ._select import build_matcher
from ._status import StatusError
from ._store import Store
from ._strategy import strategy_for
from ._table import to_table, wants_table
from ._watch import WatchOptions, WatchStream

__all__ = ["App"]

log = logging.getLogger(__name__)

_encode = msgspec.json.encode
_HEALTH = ("healthz", "readyz", "livez")
_WITH_BODY = ("POST", "PUT", "PATCH", "DELETE")


@dataclass(frozen=True, slots=True)
class _Request:
    """A resource request, decoded: what the verb handlers read."""

    method: str
    target: Target
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    user_agent: str

    @property
    def accept(self) -> str:
        return self.headers.get("accept", "")

    @property
    def manager(self) -> str:
        """The field manager: ``?fieldManager=``, else the user agent's product, else unknown."""
        return self.query.get("fieldManager") or self.user_agent.split("/")[0] or "unknown"


_Handler = Callable[[_Request, Send, Receive], Awaitable[None]]


class App:
    """The API server as an ASGI callable over one :class:`Store` (swappable on restart)."""

    def __init__(
        self,
        store: Store,
        rest: Rest,
        discovery: Discovery,
        faults: Faults,
        clock: Clock,
        *,
        token: str | None = None,
        bookmark_interval: float = 60.0,
    ) -> None:
        self.store = store
        self.rest = rest
        self.discovery = discovery
        self.faults = faults
        self.clock = clock
        self.token = token
        self.bookmark_interval = bookmark_interval
        self.requests = 0

    @property
    def registry(self) -> Any:
        return self.rest.registry

    # -- ASGI entry ------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, raw_send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, raw_send)
        if scope["type"] != "http":
            return
        self.requests += 1
        started = False

        async def send(message: MutableMapping[str, Any]) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await raw_send(message)

        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        user_agent = headers.get("user-agent", "")
        await self.faults.gate(user_agent)
        try:
            self._admit(headers)
            await self._dispatch(scope, receive, send, headers, user_agent)
        except StatusError as exc:
            if not started:
                await respond(send, exc.code, _encode(exc.to_status()), exc.headers)
        except Exception as exc:  # a bug must answer 500, not hang the client
            log.exception("internal error serving %s %s", scope.get("method"), scope.get("path"))
            if not started:
                err = StatusError(500, "InternalError", f"Internal error occurred: {exc}")
                await respond(send, 500, _encode(err.to_status()))

    def _admit(self, headers: dict[str, str]) -> None:
        """401 without the token; an injected failure when one is due."""
        if self.token is not None and not authorized(headers, self.token):
            raise StatusError(401, "Unauthorized", "Unauthorized")
        failure = self.faults.take_failure()
        if failure is not None:
            raise failure

    # -- routing ---------------------------------------------------------------------------

    async def _dispatch(
        self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str], ua: str
    ) -> None:
        """Parse the path, serve what is not a resource, else run the verb on the target."""
        query = {
            k: v[0]
            for k, v in parse_qs(scope["query_string"].decode(), keep_blank_values=True).items()
        }
        parts = [p for p in scope["path"].split("/") if p]
        accept = headers.get("accept", "")
        if not parts or parts[0] not in ("api", "apis"):
            await self._serve_non_resource(send, parts, accept)
            return
        path = ApiPath.parse(parts)
        if not path.version or not path.rest:
            await self._serve_discovery(send, path, accept)
            return
        target = resolve(self.registry, path)
        if target.legacy_watch:
            query["watch"] = "true"
        method = scope["method"]
        body = await _request_body(method, receive, headers)
        request = _Request(method, target, query, headers, body, ua)
        await self._verb(request)(request, send, receive)

    async def _serve_non_resource(self, send: Send, parts: list[str], accept: str) -> None:
        """``/``, the health checks, ``/version`` and ``/openapi``; 404 for anything else."""
        if not parts:
            await respond(send, 200, _encode({"paths": self.discovery.paths()}))
        elif parts[0] in _HEALTH:
            await respond(send, 200, b"ok", content_type=b"text/plain; charset=utf-8")
        elif parts[0] == "version":
            await respond(send, 200, _encode(self.discovery.version()))
        elif parts[0] == "openapi":
            status, body = self.discovery.openapi(parts, accept)
            await respond(send, status, body)
        else:
            raise not_found()

    async def _serve_discovery(self, send: Send, path: ApiPath, accept: str) -> None:
        """``/api``, ``/apis``, ``/apis/<group>`` and a group version's resource list."""
        if (path.core and not path.version) or (not path.core and not path.group):
            await self._discovery_root(send, accept, core=path.core)
            return
        if not path.version:
            doc = self.discovery.group(path.group)
        else:
            doc = self.discovery.resource_list(path.group, path.version)
        if doc is None:
            raise not_found()
        await respond(send, 200, _encode(doc))

    async def _discovery_root(self, send: Send, accept: str, *, core: bool) -> None:
        if "as=APIGroupDiscoveryList" in accept and "apidiscovery.k8s.io" in accept:
            doc, ctype = self.discovery.aggregated(core=core, accept=accept)
            await respond(send, 200, _encode(doc), content_type=ctype.encode())
            return
        doc = self.discovery.api_versions() if core else self.discovery.group_list()
        await respond(send, 200, _encode(doc))

    def _verb(self, request: _Request) -> _Handler:
        """The handler for the request's method on a collection or on one object."""
        verbs: dict[str, _Handler]
        if request.target.name is None:
            verbs = {"GET": self._list, "POST": self._create, "DELETE": self._delete_collection}
        else:
            verbs = {
                "GET": self._get,
                "POST": self._post,
                "PUT": self._update,
                "PATCH": self._patch,
                "DELETE": self._delete,
            }
        return verbs.get(request.method, _method_not_allowed)

    # -- verbs on a collection -------------------------------------------------------------

    async def _list(self, request: _Request, send: Send, receive: Receive) -> None:
        """LIST, or WATCH with ``?watch=true`` (or a legacy ``/watch/`` path)."""
        t = request.target
        query = request.query
        if query.get("watch") in ("true", "1"):
            await self._watch(request, send, receive)
            return
        result = self.rest.list(t.res, t.ns, query)
        if wants_table(request.accept):
            result = to_table(
                t.res, result, query.get("includeObject", "Metadata"), self.clock.now()
            )
        await respond(send, 200, _encode(result))

    async def _watch(self, request: _Request, send: Send, receive: Receive) -> None:
        t = request.target
        query = request.query
        matcher = build_matcher(
            t.res, query.get("labelSelector", ""), query.get("fieldSelector", "")
        )
        options = WatchOptions.parse(query)
        stream = WatchStream(
            self.store,
            self.rest.present,
            self.clock,
            self.faults,
            bookmark_interval=self.bookmark_interval,
            user_agent=request.user_agent,
            table=wants_table(request.accept),
        )
        await stream.serve(send, receive, t.res, t.ns, matcher, options)

    async def _create(self, request: _Request, send: Send, receive: Receive) -> None:
        t = request.target
        if t.res.namespaced and t.ns is None:
            raise StatusError.method_not_allowed()
        check_field_validation(request.query, "CreateOptions")
        payload = _object_body(request)
        created = self.rest.create(t.res, t.ns, payload, request.query, manager=request.manager)
        await respond(send, 201, _encode(created))

    async def _delete_collection(self, request: _Request, send: Send, receive: Receive) -> None:
        t = request.target
        options = decode_body(request.body) if request.body.strip() else {}
        result = self.rest.delete_collection(t.res, t.ns, options or {}, request.query)
        await respond(send, 200, _encode(result))

    # -- verbs on an object ----------------------------------------------------------------

    async def _get(self, request: _Request, send: Send, receive: Receive) -> None:
        t = request.target
        ns, name = _object_key(t)
        obj = self.rest.get(t.res, ns, name, t.subresource)
        is_view = bool(t.subresource) and strategy_for(t.res).subresource(t.subresource).view
        if wants_table(request.accept) and not is_view:
            obj = to_table(
                t.res,
                {"metadata": {}, "items": [obj]},
                request.query.get("includeObject", "Metadata"),
                self.clock.now(),
            )
        await respond(send, 200, _encode(obj))

    async def _post(self, request: _Request, send: Send, receive: Receive) -> None:
        """POST on a subresource that acts (``pods/binding``, ``pods/eviction``)."""
        t = request.target
        payload = decode_body(request.body)
        ns, name = _object_key(t)
        if not t.subresource:
            raise StatusError.method_not_allowed()
        await respond(send, 201, _encode(self.rest.post(t.res, ns, name, t.subresource, payload)))

    async def _update(self, request: _Request, send: Send, receive: Receive) -> None:
        t = request.target
        ns, name = _object_key(t)
        check_field_validation(request.query, "UpdateOptions")
        obj = self.rest.update(
            t.res,
            ns,
            name,
            _object_body(request),
            request.query,
            subresource=t.subresource,
            manager=request.manager,
        )
        await respond(send, 200, _encode(obj))

    async def _patch(self, request: _Request, send: Send, receive: Receive) -> None:
        t = request.target
        ns, name = _object_key(t)
        check_field_validation(request.query, "PatchOptions")
        status, obj = self.rest.patch(
            t.res,
            ns,
            name,
            request.body,
            request.headers.get("content-type", ""),
            request.query,
            subresource=t.subresource,
            manager=request.manager,
        )
        await respond(send, status, _encode(obj))

    async def _delete(self, request: _Request, send: Send, receive: Receive) -> None:
        t = request.target
        ns, name = _object_key(t)
        options = decode_body(request.body) if request.body.strip() else {}
        result = self.rest.delete(t.res, ns, name, options or {}, request.query)
        await respond(send, 200, _encode(result))


async def _lifespan(receive: Receive, send: Send) -> None:
    """The ASGI lifespan protocol: nothing to start or stop."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def _request_body(method: str, receive: Receive, headers: dict[str, str]) -> bytes:
    """The body of a write, as JSON or YAML bytes (protobuf decoded; CBOR is 415)."""
    if method not in _WITH_BODY:
        return b""
    body = await read_body(receive)
    ctype = headers.get("content-type", "")
    if "cbor" in ctype:
        raise StatusError.unsupported_media(ctype)
    if "protobuf" in ctype:
        try:
            body = _encode(decode_protobuf(body))
        except UnsupportedProtobuf as exc:
            raise StatusError.unsupported_media(f"{ctype}: {exc}") from exc
    return body


def _object_body(request: _Request) -> Any:
    """The object a create or update sends: built-in kinds decoded as kube-apiserver decodes
    them (custom resources are the CRD's business: read as JSON or YAML)."""
    t = request.target
    if t.res.crd is not None:
        return decode_body(request.body)
    expected = ("autoscaling/v1", "Scale") if t.subresource == "scale" else None
    content_type = request.headers.get("content-type", "")
    return decode_object(t.res, request.body, content_type, expected=expected)


def _object_key(target: Target) -> tuple[str, str]:
    """The namespace and name of a target that names one object."""
    assert target.ns is not None
    assert target.name is not None
    return target.ns, target.name


async def _method_not_allowed(request: _Request, send: Send, receive: Receive) -> None:
    raise StatusError.method_not_allowed()
