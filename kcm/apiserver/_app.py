"""The ASGI application: routing, discovery, request decoding, responses and watch streams.

A raw ASGI app (no framework): the Kubernetes URL scheme needs its own routing anyway, and raw
ASGI lets a watch response stream lines straight from the watcher's memory stream.
"""

from __future__ import annotations

import hmac
import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from datetime import datetime
from typing import Any
from urllib.parse import parse_qs

import anyio
import msgspec

from kcm.clock import Clock, move_on_after

from ._discovery import Discovery
from ._faults import Faults
from ._protobuf import UnsupportedProtobuf, decode_protobuf
from ._registry import Resource
from ._rest import Rest
from ._select import build_matcher
from ._status import StatusError
from ._store import Event, HistoryExpired, Store
from ._strategy import strategy_for
from ._table import to_table, wants_table

__all__ = ["App"]

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

_encode = msgspec.json.encode
_JSON = b"application/json"
_DEFAULT_WATCH_TIMEOUT = 1800.0


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
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await raw_send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await raw_send({"type": "lifespan.shutdown.complete"})
                    return
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
            if self.token is not None and not _authorized(headers, self.token):
                raise StatusError(401, "Unauthorized", "Unauthorized")
            failure = self.faults.take_failure()
            if failure is not None:
                raise failure
            await self._dispatch(scope, receive, send, headers, user_agent)
        except StatusError as exc:
            if not started:
                await _respond(send, exc.code, _encode(exc.to_status()), exc.headers)
        except Exception as exc:  # a bug must answer 500, not hang the client
            log.exception("internal error serving %s %s", scope.get("method"), scope.get("path"))
            if not started:
                err = StatusError(500, "InternalError", f"Internal error occurred: {exc}")
                await _respond(send, 500, _encode(err.to_status()))

    async def _dispatch(
        self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str], ua: str
    ) -> None:
        method = scope["method"]
        path = scope["path"]
        query = {
            k: v[0]
            for k, v in parse_qs(scope["query_string"].decode(), keep_blank_values=True).items()
        }
        parts = [p for p in path.split("/") if p]
        accept = headers.get("accept", "")
        if not parts:
            await _respond(send, 200, _encode({"paths": self.discovery.paths()}))
            return
        head = parts[0]
        if head in ("healthz", "readyz", "livez"):
            await _respond(send, 200, b"ok", content_type=b"text/plain; charset=utf-8")
            return
        if head == "version":
            await _respond(send, 200, _encode(self.discovery.version()))
            return
        if head == "openapi":
            status, body = self.discovery.openapi(parts, accept)
            await _respond(send, status, body)
            return
        if head not in ("api", "apis"):
            raise StatusError(404, "NotFound", "the server could not find the requested resource")
        if head == "api":
            if len(parts) == 1:
                await self._discovery_root(send, accept, core=True)
                return
            group, version, rest = "", parts[1], parts[2:]
        else:
            if len(parts) == 1:
                await self._discovery_root(send, accept, core=False)
                return
            group = parts[1]
            if len(parts) == 2:
                doc = self.discovery.group(group)
                if doc is None:
                    raise StatusError(
                        404, "NotFound", "the server could not find the requested resource"
                    )
                await _respond(send, 200, _encode(doc))
                return
            version, rest = parts[2], parts[3:]
        if not rest:
            doc = self.discovery.resource_list(group, version)
            if doc is None:
                raise StatusError(
                    404, "NotFound", "the server could not find the requested resource"
                )
            await _respond(send, 200, _encode(doc))
            return
        if rest[0] == "watch":  # legacy /watch/ paths
            rest = rest[1:]
            query["watch"] = "true"
        ns: str | None = None
        if rest[0] == "namespaces" and len(rest) >= 3:
            candidate = self.registry.lookup(group, version, rest[2])
            if candidate is not None and candidate.namespaced:
                ns, rest = rest[1], rest[2:]
        res = self.registry.lookup(group, version, rest[0])
        if res is None:
            raise StatusError(404, "NotFound", "the server could not find the requested resource")
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else ""
        if len(rest) > 3 or (res.namespaced and name is not None and ns is None):
            raise StatusError(404, "NotFound", "the server could not find the requested resource")
        if sub and sub not in res.subresources:
            raise StatusError(404, "NotFound", "the server could not find the requested resource")
        if not res.namespaced:
            ns = ""
        body = b""
        if method in ("POST", "PUT", "PATCH", "DELETE"):
            body = await _read_body(receive)
            ctype = headers.get("content-type", "")
            if "cbor" in ctype:
                raise StatusError.unsupported_media(ctype)
            if "protobuf" in ctype:
                try:
                    body = _encode(decode_protobuf(body))
                except UnsupportedProtobuf as exc:
                    raise StatusError.unsupported_media(f"{ctype}: {exc}") from exc
        manager = query.get("fieldManager") or ua.split("/")[0] or "unknown"
        rest_api = self.rest
        if method == "GET":
            if name is None:
                if query.get("watch") in ("true", "1"):
                    await self._watch(send, receive, res, ns, query, ua, accept)
                    return
                result = rest_api.list(res, ns, query)
                if wants_table(accept):
                    result = to_table(
                        res, result, query.get("includeObject", "Metadata"), self.clock.now()
                    )
                await _respond(send, 200, _encode(result))
                return
            assert ns is not None
            obj = rest_api.get(res, ns, name, sub)
            is_view = bool(sub) and strategy_for(res).subresource(sub).view
            if wants_table(accept) and not is_view:
                obj = to_table(
                    res,
                    {"metadata": {}, "items": [obj]},
                    query.get("includeObject", "Metadata"),
                    self.clock.now(),
                )
            await _respond(send, 200, _encode(obj))
            return
        if method == "POST":
            payload = _decode_body(body)
            if name is None:
                if res.namespaced and ns is None:
                    raise StatusError.method_not_allowed()
                created = rest_api.create(res, ns, payload, query, manager=manager)
                await _respond(send, 201, _encode(created))
                return
            assert ns is not None
            if not sub:
                raise StatusError.method_not_allowed()
            await _respond(send, 201, _encode(rest_api.post(res, ns, name, sub, payload)))
            return
        if name is None:
            if method == "DELETE":
                options = _decode_body(body) if body.strip() else {}
                result = rest_api.delete_collection(res, ns, options or {}, query)
                await _respond(send, 200, _encode(result))
                return
            raise StatusError.method_not_allowed()
        assert ns is not None
        if method == "PUT":
            obj = rest_api.update(
                res, ns, name, _decode_body(body), query, subresource=sub, manager=manager
            )
            await _respond(send, 200, _encode(obj))
        elif method == "PATCH":
            status, obj = rest_api.patch(
                res,
                ns,
                name,
                body,
                headers.get("content-type", ""),
                query,
                subresource=sub,
                manager=manager,
            )
            await _respond(send, status, _encode(obj))
        elif method == "DELETE":
            options = _decode_body(body) if body.strip() else {}
            result = rest_api.delete(res, ns, name, options or {}, query)
            await _respond(send, 200, _encode(result))
        else:
            raise StatusError.method_not_allowed()

    async def _discovery_root(self, send: Send, accept: str, *, core: bool) -> None:
        if "as=APIGroupDiscoveryList" in accept and "apidiscovery.k8s.io" in accept:
            doc, ctype = self.discovery.aggregated(core=core, accept=accept)
            await _respond(send, 200, _encode(doc), content_type=ctype.encode())
            return
        doc = self.discovery.api_versions() if core else self.discovery.group_list()
        await _respond(send, 200, _encode(doc))

    # -- watch -----------------------------------------------------------------------------

    async def _watch(
        self,
        send: Send,
        receive: Receive,
        res: Resource,
        ns: str | None,
        query: dict[str, str],
        user_agent: str,
        accept: str,
    ) -> None:
        store = self.store
        matcher = build_matcher(res, query.get("labelSelector", ""), query.get("fieldSelector", ""))
        rv_param = query.get("resourceVersion", "")
        bookmarks = query.get("allowWatchBookmarks") in ("true", "1")
        initial_events = query.get("sendInitialEvents")
        send_initial = initial_events in ("true", "1")
        if (
            initial_events is not None
            and initial_events != ""
            and (query.get("resourceVersionMatch") != "NotOlderThan")
        ):
            raise StatusError.invalid(
                "meta.k8s.io",
                "ListOptions",
                "",
                [
                    {
                        "reason": "FieldValueForbidden",
                        "message": "Forbidden: sendInitialEvents is forbidden for watch unless "
                        "resourceVersionMatch is set to NotOlderThan",
                        "field": "sendInitialEvents",
                    }
                ],
            )
        timeout = _DEFAULT_WATCH_TIMEOUT
        if query.get("timeoutSeconds"):
            try:
                timeout = float(query["timeoutSeconds"])
            except ValueError as exc:
                raise StatusError.bad_request("invalid timeoutSeconds") from exc
        table = wants_table(accept)
        lines: list[bytes] = []
        error: bytes | None = None
        replay: list[Event] = []
        # Synchronous from here to add_watch: no event can slip between replay and live.
        if send_initial or rv_param in ("", "0"):
            if initial_events not in ("false", "0"):
                for key in sorted(store.objects.get(res.storage_key, {})):
                    obj = store.objects[res.storage_key][key]
                    if ns and key[0] != ns:
                        continue
                    if matcher is not None and not matcher(obj):
                        continue
                    lines.append(
                        b'{"type":"ADDED","object":' + _encode(self.rest.present(res, obj)) + b"}\n"
                    )
            if send_initial:
                lines.append(self._bookmark(res, store.rv, initial_end=True))
        else:
            try:
                since = int(rv_param)
            except ValueError as exc:
                raise StatusError.bad_request(f"invalid resource version: {rv_param}") from exc
            try:
                replay = store.events_since(res.storage_key, since)
            except HistoryExpired as exc:
                err = StatusError.gone(str(exc))
                error = b'{"type":"ERROR","object":' + _encode(err.to_status()) + b"}\n"
        watch = None
        if error is None:
            watch = store.add_watch(res.storage_key, ns or None, matcher)
            for event in replay:
                line = watch.render(event)
                if line is not None:
                    lines.append(line)
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", _JSON),
                    (b"cache-control", b"no-cache, private"),
                ],
            }
        )
        try:
            async with anyio.create_task_group() as tg:

                async def _disconnect() -> None:
                    while True:
                        message = await receive()
                        if message["type"] == "http.disconnect":
                            tg.cancel_scope.cancel()
                            return

                tg.start_soon(_disconnect)
                async with move_on_after(self.clock, timeout):
                    if error is not None:
                        await self._write(send, error, user_agent)
                    else:
                        assert watch is not None
                        if lines:
                            await self._write(send, b"".join(lines), user_agent, table, res)
                        if bookmarks:
                            tg.start_soon(self._bookmark_ticker, watch)
                        await self._pump(send, watch, res, user_agent, table)
                tg.cancel_scope.cancel()
        finally:
            if watch is not None:
                store.remove_watch(watch)
        try:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except Exception:  # the client went away first
            pass

    async def _pump(
        self,
        send: Send,
        watch: Any,
        res: Resource,
        user_agent: str,
        table: bool,
    ) -> None:
        receive = watch.receive
        while True:
            try:
                line = await receive.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                return
            chunk = [line]
            while len(chunk) < 512:  # batch whatever is already queued into one write
                try:
                    chunk.append(receive.receive_nowait())
                except (anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
                    break
            data = b"".join(
                self._bookmark(res, int(item[1:])) if item.startswith(b"#") else item
                for item in chunk
            )
            await self._write(send, data, user_agent, table, res)

    async def _bookmark_ticker(self, watch: Any) -> None:
        """Queue a bookmark marker every ``bookmark_interval`` behind the events already queued.

        The marker carries the store's RV at the moment it is queued: every event up to that RV
        is ahead of it in this watcher's stream (fan-out is synchronous), so the BOOKMARK never
        claims an event the client has not been sent. A full buffer skips the tick.
        """
        while True:
            await self.clock.sleep(self.bookmark_interval)
            try:
                watch.send.send_nowait(b"#%d" % self.store.rv)
            except anyio.WouldBlock:
                continue
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                return

    def _bookmark(self, res: Resource, rv: int, *, initial_end: bool = False) -> bytes:
        meta: dict[str, Any] = {"resourceVersion": str(rv)}
        if initial_end:
            meta["annotations"] = {"k8s.io/initial-events-end": "true"}
        obj = {"kind": res.kind, "apiVersion": res.api_version, "metadata": meta}
        return b'{"type":"BOOKMARK","object":' + _encode(obj) + b"}\n"

    async def _write(
        self,
        send: Send,
        data: bytes,
        user_agent: str,
        table: bool = False,
        res: Resource | None = None,
    ) -> None:
        if self.faults.partitioned(user_agent) is not None:
            await self.faults.gate(user_agent)
        if table and res is not None:
            data = _tableize(res, data, self.clock.now())
        await send({"type": "http.response.body", "body": data, "more_body": True})


def _tableize(res: Resource, data: bytes, now: datetime) -> bytes:
    out = []
    for raw in data.splitlines():
        event = json.loads(raw)
        if event.get("type") in ("ADDED", "MODIFIED", "DELETED"):
            event["object"] = to_table(
                res, {"metadata": {}, "items": [event["object"]]}, "Object", now
            )
        out.append(_encode(event) + b"\n")
    return b"".join(out)


def _authorized(headers: dict[str, str], token: str) -> bool:
    value = headers.get("authorization", "")
    if not value.lower().startswith("bearer "):
        return False
    return hmac.compare_digest(value[7:].strip().encode(), token.encode())


async def _read_body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    return b"".join(chunks)


def _decode_body(body: bytes) -> Any:
    if not body.strip():
        raise StatusError.bad_request("the request body is empty")
    try:
        return json.loads(body)
    except ValueError:
        pass
    try:
        import yaml

        return yaml.safe_load(body)
    except Exception as exc:
        raise StatusError.bad_request(f"error decoding the request body: {exc}") from exc


async def _respond(
    send: Send,
    status: int,
    body: bytes,
    headers: dict[str, str] | None = None,
    *,
    content_type: bytes = _JSON,
) -> None:
    raw_headers = [(b"content-type", content_type), (b"content-length", str(len(body)).encode())]
    for k, v in (headers or {}).items():
        raw_headers.append((k.lower().encode(), v.encode()))
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})
