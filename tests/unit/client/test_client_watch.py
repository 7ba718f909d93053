"""Watch streams: events incl. BOOKMARK, ERROR -> typed error, malformed lines, idle timeout."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
import httpx
import pytest

from kcm.client import ApiClient
from kcm.errors import InternalError, RequestTimeout, ResourceExpired, WatchDecodeError
from kcm.models import Pod, ResourceInfo, Unstructured, WatchEvent
from kcm.testing import FakeClock

pytestmark = pytest.mark.anyio

MakeClient = Callable[..., ApiClient]


def event(kind: str, name: str = "p", rv: str = "1") -> bytes:
    obj = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": name, "resourceVersion": rv}}
    return json.dumps({"type": kind, "object": obj}).encode() + b"\n"


GONE = (
    json.dumps(
        {
            "type": "ERROR",
            "object": {
                "kind": "Status",
                "apiVersion": "v1",
                "status": "Failure",
                "message": "too old resource version: 1 (5)",
                "reason": "Expired",
                "code": 410,
            },
        }
    ).encode()
    + b"\n"
)


class Body:
    """A streamed response body (a plain async iterator: no async generator to finalize)."""

    def __init__(self, *chunks: bytes, hang: bool = False, gate: anyio.Event | None = None) -> None:
        self.chunks = list(chunks)
        self.hang = hang
        self.gate = gate

    def __aiter__(self) -> Body:
        return self

    async def __anext__(self) -> bytes:
        if self.gate is not None and len(self.chunks) == 1:
            await self.gate.wait()
        if self.chunks:
            return self.chunks.pop(0)
        if self.hang:
            await anyio.sleep_forever()
        raise StopAsyncIteration


def streaming(*chunks: bytes, hang: bool = False) -> httpx.Response:
    return httpx.Response(200, content=Body(*chunks, hang=hang))


async def collect(
    client: ApiClient, out: list[WatchEvent[Any]] | None = None, *, api: Any = None, **kw: Any
) -> list[WatchEvent[Any]]:
    """Every event of one watch (appended to ``out`` as they come, so a test sees partial runs)."""
    out = [] if out is None else out
    async with (api or client.api(Pod, namespace="ns")).watch(**kw) as events:
        async for ev in events:
            out.append(ev)
    return out


async def test_events_bookmarks_and_query(make_client: MakeClient, server: Any) -> None:
    data = event("ADDED", "a", "2") + event("MODIFIED", "a", "3") + event("BOOKMARK", "", "9")
    # split lines across chunks at awkward places
    server.responses.append(streaming(data[:10], data[10:70], data[70:]))
    async with make_client() as client:
        events = await collect(
            client,
            resource_version="1",
            label_selector="app=x",
            timeout_seconds=300,
            send_initial_events=False,
        )
    assert [(e.type, e.object.metadata.resource_version) for e in events] == [
        ("ADDED", "2"),
        ("MODIFIED", "3"),
        ("BOOKMARK", "9"),
    ]
    req = server.last
    assert req.url.path == "/api/v1/namespaces/ns/pods"
    assert dict(req.url.params) == {
        "watch": "true",
        "allowWatchBookmarks": "true",
        "resourceVersion": "1",
        "labelSelector": "app=x",
        "timeoutSeconds": "300",
        "sendInitialEvents": "false",
    }


async def test_error_event_raises_resource_expired(make_client: MakeClient, server: Any) -> None:
    server.responses.append(streaming(event("ADDED"), GONE, event("ADDED", "later")))
    seen: list[WatchEvent[Any]] = []
    async with make_client() as client:
        with pytest.raises(ResourceExpired, match="too old"):
            await collect(client, seen, resource_version="1")
    assert [e.type for e in seen] == ["ADDED"]


async def test_error_event_for_unstructured(make_client: MakeClient, server: Any) -> None:
    info = ResourceInfo(group="x.io", version="v1", kind="W", plural="ws", namespaced=False)
    server.responses.append(streaming(GONE))
    async with make_client() as client:
        with pytest.raises(ResourceExpired):
            await collect(client, api=client.api(Unstructured, resource=info))


async def test_malformed_line_raises_with_the_line(make_client: MakeClient, server: Any) -> None:
    bad = b'{"type": "ADDED", "object": {"kind": "Pod", "metadata": '
    server.responses.append(streaming(event("ADDED"), bad + b"\n", event("ADDED", "after")))
    seen: list[WatchEvent[Any]] = []
    async with make_client() as client:
        with pytest.raises(WatchDecodeError) as info:
            await collect(client, seen)
    assert [e.object.metadata.name for e in seen] == [
        "p"
    ]  # not skipped: the event after it is never delivered
    assert info.value.line == bad


async def test_wrong_kind_is_a_decode_error(make_client: MakeClient, server: Any) -> None:
    line = json.dumps({"type": "ADDED", "object": {"kind": "Service", "metadata": {}}}).encode()
    server.responses.append(streaming(line + b"\n"))
    async with make_client() as client:
        with pytest.raises(WatchDecodeError, match="does not match"):
            await collect(client)


async def test_truncated_last_line_is_an_error(make_client: MakeClient, server: Any) -> None:
    server.responses.append(streaming(event("ADDED") + b'{"type": "ADD'))
    async with make_client() as client:
        with pytest.raises(WatchDecodeError):
            await collect(client)


async def test_normal_end_of_stream_ends_iteration(make_client: MakeClient, server: Any) -> None:
    server.responses.append(streaming(event("ADDED"), b"\n", event("DELETED")))
    async with make_client() as client:
        events = await collect(client)
    assert [e.type for e in events] == ["ADDED", "DELETED"]


async def test_watch_failure_status_is_typed_and_not_retried(
    make_client: MakeClient, server: Any
) -> None:
    server.status(500, "InternalError", "etcd down", headers={"Retry-After": "1"})
    async with make_client() as client:
        with pytest.raises(InternalError, match="etcd down"):
            await collect(client)
    assert len(server.requests) == 1


async def test_idle_watchdog_fires_on_the_fake_clock(make_client: MakeClient, server: Any) -> None:
    clock = FakeClock()
    server.responses.append(streaming(event("ADDED"), hang=True))
    seen: list[str] = []
    failure: list[BaseException] = []

    async with make_client(clock=clock, watch_idle_timeout=90) as client:

        async def consume() -> None:
            try:
                async with client.api(Pod).watch() as events:
                    async for ev in events:
                        seen.append(ev.type)
            except RequestTimeout as exc:
                failure.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(consume)
            await clock.advance(89.0)
            assert seen == ["ADDED"]
            assert not failure
            await clock.advance(1.0)
    assert len(failure) == 1
    assert "idle" in str(failure[0])


async def test_bytes_push_the_idle_deadline_back(make_client: MakeClient, server: Any) -> None:
    clock = FakeClock()
    gate = anyio.Event()
    body = Body(event("ADDED", "first"), event("MODIFIED", "first"), hang=True, gate=gate)
    server.responses.append(httpx.Response(200, content=body))
    seen: list[str] = []
    failure: list[BaseException] = []
    async with make_client(clock=clock) as client:

        async def consume() -> None:
            try:
                async with client.api(Pod).watch(idle_timeout=10) as events:
                    async for ev in events:
                        seen.append(ev.type)
            except RequestTimeout as exc:
                failure.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(consume)
            await clock.advance(8.0)
            gate.set()
            await clock.advance(8.0)  # 16 s since start but only 8 s since the last byte
            assert seen == ["ADDED", "MODIFIED"]
            assert not failure
            await clock.advance(2.0)
    assert len(failure) == 1


class TimingOutBody(Body):
    """A body whose second read times out in the transport (its per-read timeout)."""

    async def __anext__(self) -> bytes:
        if not self.chunks:
            raise httpx.ReadTimeout("read timed out")
        return await super().__anext__()


async def test_on_the_real_clock_the_transport_keeps_the_idle_timeout(
    make_client: MakeClient, server: Any
) -> None:
    """No cancel scope per read on the system clock: the watch asks the transport for a
    per-read timeout of ``idle_timeout``, and its read timeout is the same idle RequestTimeout."""
    timeouts: list[dict[str, Any]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        timeouts.append(request.extensions["timeout"])
        return httpx.Response(200, content=TimingOutBody(event("ADDED")))

    server.responses.append(answer)
    seen: list[WatchEvent[Any]] = []
    async with make_client() as client:
        with pytest.raises(RequestTimeout, match=r"nothing for 7s \(idle timeout\)"):
            await collect(client, seen, idle_timeout=7)
    assert [ev.type for ev in seen] == ["ADDED"]
    assert timeouts[0]["read"] == 7


async def test_on_a_fake_clock_the_transport_has_no_read_timeout(
    make_client: MakeClient, server: Any
) -> None:
    timeouts: list[dict[str, Any]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        timeouts.append(request.extensions["timeout"])
        return streaming(event("ADDED"))

    server.responses.append(answer)
    async with make_client(clock=FakeClock()) as client:
        assert [ev.type for ev in await collect(client, idle_timeout=7)] == ["ADDED"]
    assert timeouts[0]["read"] is None


async def test_breaking_out_closes_the_stream(make_client: MakeClient, server: Any) -> None:
    server.responses.append(streaming(event("ADDED"), hang=True))
    async with make_client() as client:
        with anyio.fail_after(5):
            async with client.api(Pod).watch() as events:
                async for ev in events:
                    assert ev.type == "ADDED"
                    break
