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
import yaml

from kcm.clock import Clock, move_on_after
from kcm.selectors import FieldSelector

from ._authn import Authenticator
from ._authz import check, check_impersonation, request_attributes
from ._body import decode_object
from ._compression import accepts_gzip, gzipping
from ._discovery import Discovery
from ._faults import Faults
from ._http import Receive, Scope, Send, decode_body, read_body, respond
from ._limits import InFlight, Limits, long_running
from ._list import cache_read
from ._metrics import METRICS_GROUP, serve_metrics
from ._negotiation import (
    Conversion,
    negotiate,
    partial_object_metadata,
    partial_object_metadata_list,
)
from ._nesting import check_nesting, deeper_than, nesting_error
from ._openapi import OpenApi
from ._options import ListOptions, Params, delete_options, validate_write_options
from ._protobuf import UnsupportedProtobuf, decode_protobuf
from ._requester import Requester
from ._rest import Rest
from ._routing import ApiPath, PageNotFound, Target, allowed_methods, not_found, resolve
from ._select import build_matcher
from ._status import StatusError
from ._store import Store
from ._strategy import strategy_for
from ._table import to_table, wants_table
from ._watch import WatchOptions, WatchStream

__all__ = ["App"]

log = logging.getLogger(__name__)
audit = logging.getLogger("kcm.apiserver.audit")
"""One DEBUG line per request: user, verb, path, status code, user agent (kube-apiserver's
httplog); off unless that logger is at DEBUG."""

_encode = msgspec.json.encode
_HEALTH = ("healthz", "readyz", "livez")
_WITH_BODY = ("POST", "PUT", "PATCH", "DELETE")
_PATCH_TYPES = (
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
)
_TEXT = b"text/plain; charset=utf-8"
_TOO_MANY = b"Too many requests, please try again later.\n"
_RETRY_HEADERS = {"Retry-After": "1", "X-Content-Type-Options": "nosniff"}


@dataclass(frozen=True, slots=True)
class _Request:
    """A resource request, decoded: what the verb handlers read."""

    method: str
    target: Target
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    user_agent: str
    params: Params
    """Every value of every query parameter (``query`` has the first of each)."""
    who: Requester
    """Whom the request acts as (authenticated, impersonation applied)."""

    @property
    def accept(self) -> str:
        return self.headers.get("accept", "")

    @property
    def upgrade(self) -> bool:
        """Whether the client asked to switch to a stream (websocket or SPDY)."""
        tokens = {t.strip().lower() for t in self.headers.get("connection", "").split(",")}
        return "upgrade" in tokens and bool(self.headers.get("upgrade"))

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
        authenticator: Authenticator | None = None,
        bookmark_interval: float = 60.0,
        limits: Limits | None = None,
    ) -> None:
        self.store = store
        self.rest = rest
        self.discovery = discovery
        self.faults = faults
        self.clock = clock
        self.authenticator = authenticator or Authenticator(rest.ctx.tokens, clock)
        rest.ctx.authenticator = self.authenticator
        self.bookmark_interval = bookmark_interval
        self.limits = limits or Limits()
        self.inflight = InFlight(self.limits)
        self.requests = 0
        self.openapi = OpenApi()

    @property
    def registry(self) -> Any:
        return self.rest.registry

    # -- ASGI entry ------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, raw_send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, raw_send)
        if scope["type"] == "websocket":
            await self._websocket(scope, raw_send)
        if scope["type"] != "http":
            return
        self.requests += 1
        watch = b"watch" in scope["query_string"]  # parse the query only when it may matter
        limited = not long_running(
            scope["method"], _segments(scope), _params(scope) if watch else {}
        )
        await self._serve_http(scope, receive, raw_send, limited=limited)

    async def _serve_http(
        self, scope: Scope, receive: Receive, raw_send: Send, *, limited: bool
    ) -> None:
        """One HTTP request through kube-apiserver's filters, in their order: authentication
        (401) and impersonation, then the in-flight limit (429; ``limited`` is False for a
        long-running request), then authorization (403), then the handler. Errors become a
        Status (a bug a 500)."""
        started = False
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if limited and accepts_gzip(headers.get("accept-encoding", "")):
            raw_send = gzipping(raw_send)  # never a long-running (streamed) response
        code = 0
        who: Requester | None = None

        async def send(message: MutableMapping[str, Any]) -> None:
            nonlocal started, code
            if message["type"] == "http.response.start":
                started = True
                code = message.get("status", 0)
            await raw_send(message)

        user_agent = headers.get("user-agent", "")
        method = scope["method"]
        slot = False
        try:
            try:
                who = self._authenticate(headers)
                if limited and not self._exempt(who):
                    if not self.inflight.try_acquire(method):
                        await respond(send, 429, _TOO_MANY, _RETRY_HEADERS, content_type=_TEXT)
                        return
                    slot = True
                await self.faults.gate(user_agent)  # a held request keeps its slot
                self._authorize(scope, who)
            except StatusError:
                await _discard_body(method, receive)
                raise
            await self._dispatch(scope, receive, send, headers, user_agent, who)
        except StatusError as exc:
            if not started:
                await respond(send, exc.code, _encode(exc.to_status()), exc.headers)
        except PageNotFound:
            if not started:
                await respond(send, 404, b"404 page not found\n", content_type=_TEXT)
        except Exception as exc:  # a bug must answer 500, not hang the client
            log.exception("internal error serving %s %s", scope.get("method"), scope.get("path"))
            if not started:
                err = StatusError(500, "InternalError", f"Internal error occurred: {exc}")
                await respond(send, 500, _encode(err.to_status()))
        finally:
            if slot:
                self.inflight.release(method)
            if audit.isEnabledFor(logging.DEBUG):
                audit.debug(
                    "user=%s verb=%s uri=%s code=%d agent=%s",
                    who.name if who is not None else "-",
                    method,
                    scope["path"]
                    + ("?" + scope["query_string"].decode() if scope["query_string"] else ""),
                    code,
                    user_agent,
                )

    def _exempt(self, who: Requester) -> bool:
        """``system:masters`` is never refused for load (kube's max-in-flight filter), but only
        when it authenticated as such: on a server that authenticates nobody every caller is
        the administrator, and the limit must still protect it from one runaway client."""
        return self.authenticator.enabled and who.privileged

    async def _websocket(self, scope: Scope, send: Send) -> None:
        """A websocket upgrade (``kubectl exec``'s first try) is served as the GET it is; kcm
        streams nothing, so the answer is always a plain HTTP response refusing the upgrade
        (ASGI's ``websocket.http.response``)."""
        if "websocket.http.response" not in scope.get("extensions", {}):
            await send({"type": "websocket.close"})
            return

        async def receive() -> MutableMapping[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def as_websocket(message: MutableMapping[str, Any]) -> None:
            await send({**message, "type": "websocket." + message["type"]})

        await self({**scope, "type": "http", "method": "GET"}, receive, as_websocket)

    def _authenticate(self, headers: dict[str, str]) -> Requester:
        """Whom the request acts as: 401 when it does not authenticate, 403 when it may not
        impersonate whom it asks to."""
        caller = self.authenticator.authenticate(headers, self.store)
        if self.authenticator.enabled and "impersonate-user" in headers:
            check_impersonation(self.store, caller, headers)
        return Requester.from_headers(headers, caller)

    def _authorize(self, scope: Scope, who: Requester) -> None:
        """403 when ``who`` may not do what the request asks; an injected failure when one is
        due.

        A server that authenticates nobody authorizes everything (its callers are all its
        administrator); otherwise RBAC decides, as kube-apiserver's ``--authorization-mode=RBAC``.
        """
        if self.authenticator.enabled:
            params = parse_qs(scope["query_string"].decode(), keep_blank_values=True)
            check(self.store, who, request_attributes(scope["method"], scope["path"], params))
        failure = self.faults.take_failure()
        if failure is not None:
            raise failure

    # -- routing ---------------------------------------------------------------------------

    async def _dispatch(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: dict[str, str],
        ua: str,
        who: Requester,
    ) -> None:
        """Parse the path, serve what is not a resource, else run the verb on the target."""
        params = _params(scope)
        query = {k: v[0] for k, v in params.items()}
        parts = _segments(scope)
        accept = headers.get("accept", "")
        if parts[:1] == ["openapi"]:
            await self._serve_openapi(send, parts, headers)
            return
        if not parts or parts[0] not in ("api", "apis"):
            await self._serve_non_resource(send, parts, accept)
            return
        path = ApiPath.parse(parts)
        if not path.version or not path.rest:
            await self._serve_discovery(send, path, accept)
            return
        target = resolve(self.registry, path)
        method = scope["method"]
        body = await self._request_body(method, receive, headers, target)
        request = _Request(method, target, query, headers, body, ua, params, who)
        await self._verb(request)(request, send, receive)

    async def _request_body(
        self, method: str, receive: Receive, headers: dict[str, str], target: Target
    ) -> bytes:
        """The body of a write, as JSON or YAML bytes (protobuf decoded; CBOR is 415), within
        the body limit, the request timeout and the nesting limit."""
        if method not in _WITH_BODY:
            return b""
        limit, timeout = self.limits.max_request_body_bytes, self.limits.request_timeout
        body: bytes | None = None
        if not timeout:
            body = await read_body(receive, headers, limit)
        else:
            async with move_on_after(self.clock, timeout):
                body = await read_body(receive, headers, limit)
        if body is None:
            raise _timed_out()
        ctype = headers.get("content-type", "")
        if "cbor" in ctype:
            raise StatusError.unsupported_media(ctype)
        if "protobuf" in ctype:
            try:
                body = _encode(decode_protobuf(body))
            except UnsupportedProtobuf as exc:
                raise StatusError.unsupported_media(f"{ctype}: {exc}") from exc
        check_nesting(body, method, ctype, target.res.kind)
        return body

    async def _serve_non_resource(self, send: Send, parts: list[str], accept: str) -> None:
        """``/``, the health checks and ``/version``; 404 for anything else."""
        if not parts:
            await respond(send, 200, _encode({"paths": self.discovery.paths()}))
        elif parts[0] in _HEALTH:
            await respond(send, 200, b"ok", content_type=b"text/plain; charset=utf-8")
        elif parts[0] == "version":
            await respond(send, 200, _encode(self.discovery.version()))
        else:
            raise PageNotFound()

    async def _serve_openapi(self, send: Send, parts: list[str], headers: dict[str, str]) -> None:
        """``/openapi/v2`` (JSON or protobuf, as ``Accept`` asks); 404 for the rest."""
        reply = self.openapi.serve(parts, headers)
        raw_headers = [(k.lower().encode(), v.encode()) for k, v in reply.headers.items()]
        if reply.content_type:
            raw_headers.append((b"content-type", reply.content_type.encode()))
        raw_headers.append((b"content-length", str(len(reply.body)).encode()))
        await send({"type": "http.response.start", "status": reply.code, "headers": raw_headers})
        await send({"type": "http.response.body", "body": reply.body, "more_body": False})

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
            if path.core or self.registry.is_builtin_group(path.group):
                raise not_found()
            raise PageNotFound()
        await respond(send, 200, _encode(doc))

    async def _discovery_root(self, send: Send, accept: str, *, core: bool) -> None:
        if "as=APIGroupDiscoveryList" in accept and "apidiscovery.k8s.io" in accept:
            doc, ctype = self.discovery.aggregated(core=core, accept=accept)
            await respond(send, 200, _encode(doc), content_type=ctype.encode())
            return
        doc = self.discovery.api_versions() if core else self.discovery.group_list()
        await respond(send, 200, _encode(doc))

    def _verb(self, request: _Request) -> _Handler:
        """The handler for the request's method on a collection or on one object.

        Raises:
            StatusError: 404 when kube-apiserver serves no such path (an object path of a
                create-only resource), 405 when the path does not take the method.
        """
        target = request.target
        allowed = allowed_methods(target)
        if target.res.crd is not None and target.ns is None and request.method not in allowed:
            raise PageNotFound()  # the CRD handler passes what it cannot serve on, as unserved
        if not allowed:
            raise not_found()
        if request.method not in allowed:
            raise StatusError.method_not_allowed()
        verbs: dict[str, _Handler]
        if target.res.group == METRICS_GROUP and not target.legacy_watch:
            return self._metrics
        if request.target.legacy_watch:
            return self._watch
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
        """LIST, or WATCH with ``?watch`` (any value but ``0``/``false``)."""
        t = request.target
        options = ListOptions.parse(request.params)
        if options.watch:
            await self._watch(request, send, receive, options)
            return
        conversion = negotiate(request.accept)
        result = self.rest.list(t.res, t.ns, options)
        if conversion is not None and conversion.table:
            include = request.query.get("includeObject", "Metadata")
            result = to_table(t.res, result, include, self.clock.now())
        elif conversion is not None:
            result = partial_object_metadata_list(t.res, result, conversion)
        await respond(send, 200, _encode(result))

    async def _metrics(self, request: _Request, send: Send, receive: Receive) -> None:
        """metrics.k8s.io, computed from the stored pods and nodes (no watch, as
        metrics-server)."""
        t = request.target
        if ListOptions.parse(request.params).watch:
            raise StatusError.method_not_supported(t.res.group, t.res.plural, "watch")
        labels = request.query.get("labelSelector", "")
        result = serve_metrics(self.store, t.res, t.ns, t.name, labels, self.clock.now())
        if wants_table(request.accept):
            include = request.query.get("includeObject", "Metadata")
            result = to_table(t.res, result, include, self.clock.now())
        await respond(send, 200, _encode(result))

    async def _watch(
        self,
        request: _Request,
        send: Send,
        receive: Receive,
        options: ListOptions | None = None,
    ) -> None:
        """WATCH a collection, or one object (``/watch/.../NAME``: a field selector on its
        name)."""
        t = request.target
        conversion = negotiate(request.accept)
        if options is None:
            options = ListOptions.parse(request.params, watch=True)
        if "watch" not in t.res.verbs:
            raise StatusError.method_not_supported(t.res.group, t.res.plural, "watch")
        fields = options.field_selector
        if t.name is not None:
            fields = _name_selector(fields, t.name)
        matcher = build_matcher(t.res, options.label_selector, fields)
        stream = WatchStream(
            self.store,
            self.rest.present,
            self.clock,
            self.faults,
            bookmark_interval=self.bookmark_interval,
            user_agent=request.user_agent,
            conversion=conversion,
        )
        await stream.serve(send, receive, t.res, t.ns, matcher, WatchOptions.of(options))

    async def _create(self, request: _Request, send: Send, receive: Receive) -> None:
        t = request.target
        validate_write_options(request.params, "CreateOptions")
        if (t.res.group, t.res.plural) == ("", "bindings"):
            result = self._bind(t, decode_body(request.body))
            await respond(send, 201, _encode(result))
            return
        if t.res.namespaced and t.ns is None:
            raise StatusError.method_not_allowed()
        payload = _object_body(request)
        created = self.rest.create(
            t.res, t.ns, payload, request.query, manager=request.manager, who=request.who
        )
        await respond(send, 201, _encode(created))

    def _bind(self, target: Target, payload: Any) -> dict[str, Any]:
        """POST to the legacy ``bindings`` collection: binds the pod the Binding names, as
        ``pods/NAME/binding`` does."""
        pods = self.registry.lookup("", "v1", "pods")
        assert pods is not None
        assert target.ns is not None
        meta = payload.get("metadata") if isinstance(payload, dict) else None
        name = str((meta or {}).get("name") or "")
        return _created_status(self.rest.post(pods, target.ns, name, "binding", payload))

    async def _delete_collection(self, request: _Request, send: Send, receive: Receive) -> None:
        t = request.target
        list_options = ListOptions.parse(request.params)
        options = delete_options(_options_body(request.body), request.params)
        result = self.rest.delete_collection(t.res, t.ns, options, request.query, list_options)
        await respond(send, 200, _encode(result))

    # -- verbs on an object ----------------------------------------------------------------

    async def _get(self, request: _Request, send: Send, receive: Receive) -> None:
        t = request.target
        if _streams(t):
            await self._connect(request, send)
            return
        ns, name = _object_key(t)
        conversion = negotiate(request.accept)
        cache_read(self.store, request.query.get("resourceVersion", ""))
        obj = self.rest.get(t.res, ns, name, t.subresource)
        is_view = bool(t.subresource) and strategy_for(t.res).subresource(t.subresource).view
        if conversion is not None and not is_view:
            obj = self._convert_one(t, obj, conversion, request)
        await respond(send, 200, _encode(obj))

    def _convert_one(
        self, t: Target, obj: dict[str, Any], conversion: Conversion, request: _Request
    ) -> dict[str, Any]:
        """One object as the Table or PartialObjectMetadata ``Accept`` asked for."""
        if conversion.table:
            return to_table(
                t.res,
                {"metadata": {}, "items": [obj]},
                request.query.get("includeObject", "Metadata"),
                self.clock.now(),
            )
        return partial_object_metadata(t.res, obj, conversion)

    async def _post(self, request: _Request, send: Send, receive: Receive) -> None:
        """POST on a subresource that acts (``pods/binding``, ``pods/eviction``,
        ``serviceaccounts/token``): 201, a Status without a code gets 201."""
        t = request.target
        if _streams(t):
            await self._connect(request, send)
            return
        validate_write_options(request.params, "CreateOptions")
        payload = decode_body(request.body, t.res.kind)
        ns, name = _object_key(t)
        result = self.rest.post(
            t.res, ns, name, t.subresource, payload, manager=request.manager, query=request.query
        )
        await respond(send, 201, _encode(_created_status(result)))

    async def _connect(self, request: _Request, send: Send) -> None:
        """GET or POST on a streaming subresource (``pods/log``, ``exec``, ...): no object
        comes back, only the stream's bytes (none for a 204)."""
        t = request.target
        ns, name = _object_key(t)
        reply = self.rest.connect(
            t.res, ns, name, t.subresource, request.query, upgrade=request.upgrade
        )
        if reply.code == 204:
            await send({"type": "http.response.start", "status": 204, "headers": []})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        await respond(send, reply.code, reply.body, content_type=reply.content_type.encode())

    async def _update(self, request: _Request, send: Send, receive: Receive) -> None:
        t = request.target
        ns, name = _object_key(t)
        validate_write_options(request.params, "UpdateOptions")
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
        ctype = request.headers.get("content-type", "")
        patch_type = ctype.split(";")[0].strip()
        if patch_type not in _PATCH_TYPES:
            raise StatusError.unsupported_media(ctype)
        validate_write_options(request.params, "PatchOptions", patch_type=patch_type)
        status, obj = self.rest.patch(
            t.res,
            ns,
            name,
            request.body,
            ctype,
            request.query,
            subresource=t.subresource,
            manager=request.manager,
        )
        await respond(send, status, _encode(obj))

    async def _delete(self, request: _Request, send: Send, receive: Receive) -> None:
        t = request.target
        ns, name = _object_key(t)
        options = delete_options(_options_body(request.body), request.params)
        result = self.rest.delete(t.res, ns, name, options, request.query)
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


async def _discard_body(method: str, receive: Receive, limit: int = 1 << 20) -> None:
    """Read (up to ``limit`` bytes of) the body of a request that is refused before it is
    read, so the connection closes cleanly (a TLS connection closed with the client's body
    still arriving ends in an SSL error)."""
    if method not in _WITH_BODY:
        return
    seen = 0
    while seen <= limit:
        message = await receive()
        if message["type"] != "http.request":
            return
        seen += len(message.get("body", b""))
        if not message.get("more_body"):
            return


def _timed_out() -> StatusError:
    """kube-apiserver's answer when a request outlives ``--request-timeout``."""
    message = "Timeout: request did not complete within the allotted timeout"
    return StatusError(504, "Timeout", message, details={})


def _segments(scope: Scope) -> list[str]:
    return [p for p in scope["path"].split("/") if p]


def _params(scope: Scope) -> dict[str, list[str]]:
    return parse_qs(scope["query_string"].decode(), keep_blank_values=True)


def _object_body(request: _Request) -> Any:
    """The object a create or update sends: built-in kinds decoded as kube-apiserver decodes
    them (custom resources are the CRD's business: read as JSON or YAML)."""
    t = request.target
    if t.res.crd is not None:
        return decode_body(request.body)
    expected = ("autoscaling/v1", "Scale") if t.subresource == "scale" else None
    content_type = request.headers.get("content-type", "")
    if "yaml" in content_type and request.body.strip():
        _check_yaml_depth(request.body, t.res.kind)
    return decode_object(t.res, request.body, content_type, expected=expected)


def _check_yaml_depth(body: bytes, kind: str) -> None:
    """A YAML body nested too deeply by indentation (which the raw check cannot see) is
    refused before it is decoded, as kube-apiserver's YAML to JSON conversion refuses it."""
    try:
        value = yaml.safe_load(body)
    except RecursionError:
        raise nesting_error(body, None, "POST", "application/yaml", kind) from None
    except yaml.YAMLError:
        return  # the decoder words the syntax error
    if deeper_than(value):
        raise nesting_error(body, None, "POST", "application/yaml", kind)


def _streams(target: Target) -> bool:
    """Whether the target is a streaming subresource (kube's Connecter: ``pods/exec``, ...)."""
    return (
        bool(target.subresource)
        and strategy_for(target.res).subresource(target.subresource).connects
    )


def _object_key(target: Target) -> tuple[str, str]:
    """The namespace and name of a target that names one object."""
    assert target.ns is not None
    assert target.name is not None
    return target.ns, target.name


async def _method_not_allowed(request: _Request, send: Send, receive: Receive) -> None:
    raise StatusError.method_not_allowed()


def _options_body(body: bytes) -> Any:
    """A DELETE's DeleteOptions body, or None when it has none."""
    return decode_body(body) if body.strip() else None


def _created_status(result: dict[str, Any]) -> dict[str, Any]:
    """A Status a create answers gets the create's code (kube's create handler sets it)."""
    if result.get("kind") == "Status" and not result.get("code"):
        return {**result, "code": 201}
    return result


def _name_selector(fields: str, name: str) -> str:
    """A watch of one object: its name as the field selector (400, as kube, when the query's
    own selector does not pick exactly that name)."""
    selector = FieldSelector.parse(fields)
    if not selector.requirements:
        return f"metadata.name={name}"
    exact = [
        r.value
        for r in selector.requirements
        if r.field == "metadata.name" and r.operator in ("=", "==")
    ]
    if exact != [name]:
        raise StatusError.bad_request("fieldSelector metadata.name doesn't match requested name")
    return fields
