"""A fast stub Kubernetes API server for the informer benchmark (run as its own process).

``python benchmarks/_stub_server.py --pods N --events M`` pre-encodes N pods from
``benchmarks/_corpus.py`` and a watch stream of M MODIFIED events, binds 127.0.0.1 on a free
port and prints the port on stdout. Everything a request needs is pre-encoded at start-up, so
serving is a dict lookup plus a write; the server is never the bottleneck.

How the watch stream is written (``--flush-per-event``, the default, or ``--burst``):

- flush per event, as kube-apiserver does (it flushes its response writer after every event):
  one ``write`` (one ``send``) per event, then the server waits until the transport has handed
  it to the kernel and yields to the loop before the next. A client that keeps up reads one
  event per socket read; one that falls behind reads what has piled up in the socket buffer.
- burst: the whole stream at once with ``writelines``; clients read many events per read,
  which flatters clients with a high per-read cost (the benchmark's old behaviour).

Routes (plain HTTP/1.1, keep-alive):

- ``GET /api/v1/namespaces/bench-K-E/pods[?limit=L&continue=C]``: a PodList of the first K pods
  (paged when ``limit`` is given; the continue token is the next offset), resourceVersion
  ``LIST_RV``. Every object keeps ``namespace: default``; the namespace only selects the size.
- ``GET ...?watch=1&resourceVersion=LIST_RV``: the first E MODIFIED events as chunked
  newline-delimited JSON (one chunk per event, like kube-apiserver), then end of stream.
  Event k modifies pod ``k % min(K, 1000)`` with resourceVersion ``LIST_RV + 1 + k``.
- A watch from any other resourceVersion (a re-watch after the stream ended) is held open
  with no events until the client goes away.
- ``/version``, ``/api``, ``/apis``, ``/api/v1``: minimal discovery (kr8s asks for it).
- Anything else: 404 Status.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import sys
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import msgspec

ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]

LIST_RV = 1_000_000
HOT_PODS = 1000


def _load_corpus() -> Any:
    spec = importlib.util.spec_from_file_location("_corpus", ROOT / "benchmarks" / "_corpus.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Data:
    """Every response body, pre-encoded."""

    def __init__(self, pods: int, events: int) -> None:
        corpus = _load_corpus()
        enc = msgspec.json.Encoder()
        dicts = [corpus.make_pod(i) for i in range(pods)]
        self.pods = [enc.encode(d) for d in dicts]
        # Chunked watch stream: one chunk per event line; offsets[k] = end of the k-th chunk.
        parts: list[bytes] = []
        self.offsets = [0]
        total = 0
        hot = min(pods, HOT_PODS)
        for k in range(events):
            src = dicts[k % hot]
            obj = dict(src)
            meta = dict(src["metadata"])
            meta["resourceVersion"] = str(LIST_RV + 1 + k)
            obj["metadata"] = meta
            status = dict(src["status"])
            status["hostIP"] = f"10.1.{k % 250}.{k // 250 % 250}"
            obj["status"] = status
            line = enc.encode({"type": "MODIFIED", "object": obj}) + b"\n"
            chunk = b"%x\r\n%s\r\n" % (len(line), line)
            parts.append(chunk)
            total += len(chunk)
            self.offsets.append(total)
        self.stream = memoryview(b"".join(parts))
        self._pages: dict[tuple[int, int, int], list[bytes]] = {}

    def page(self, size: int, start: int, limit: int | None) -> list[bytes]:
        end = size if limit is None else min(size, start + limit)
        key = (size, start, end)
        body = self._pages.get(key)
        if body is None:
            meta: dict[str, Any] = {"resourceVersion": str(LIST_RV)}
            if end < size:
                meta["continue"] = str(end)
                meta["remainingItemCount"] = size - end
            head = (
                b'{"apiVersion":"v1","kind":"PodList","metadata":'
                + msgspec.json.encode(meta)
                + b',"items":['
            )
            body = [head + b",".join(self.pods[start:end]) + b"]}"]
            self._pages[key] = body
        return body


def _response(status: str, body_len: int, ctype: bytes = b"application/json") -> bytes:
    return b"HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n" % (
        status.encode(),
        ctype,
        body_len,
    )


_NOT_FOUND = (
    b'{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}'
)


_DISCOVERY = {
    "/version": msgspec.json.encode({"major": "1", "minor": "32", "gitVersion": "v1.32.0"}),
    "/api": msgspec.json.encode({"kind": "APIVersions", "versions": ["v1"]}),
    "/apis": msgspec.json.encode({"kind": "APIGroupList", "apiVersion": "v1", "groups": []}),
    "/api/v1": msgspec.json.encode(
        {
            "kind": "APIResourceList",
            "groupVersion": "v1",
            "resources": [
                {
                    "name": "pods",
                    "singularName": "pod",
                    "namespaced": True,
                    "kind": "Pod",
                    "verbs": ["get", "list", "watch"],
                    "shortNames": ["po"],
                }
            ],
        }
    ),
}


class StubProtocol(asyncio.Protocol):
    def __init__(self, data: Data, *, flush_per_event: bool) -> None:
        self.data = data
        self.flush_per_event = flush_per_event
        self.buf = b""
        self.transport: asyncio.Transport | None = None
        self.writable = asyncio.Event()
        self.writable.set()
        self.tasks: set[asyncio.Task[None]] = set()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        # Small high-water mark: "drained" means handed to the kernel, as a flush is.
        transport.set_write_buffer_limits(high=0)

    def connection_lost(self, exc: Exception | None) -> None:
        self.writable.set()
        for task in self.tasks:
            task.cancel()

    def pause_writing(self) -> None:
        self.writable.clear()

    def resume_writing(self) -> None:
        self.writable.set()

    async def stream_flushed(self, events: int) -> None:
        """Write the first ``events`` chunks one at a time, each drained before the next."""
        assert self.transport is not None
        offsets, stream = self.data.offsets, self.data.stream
        for k in range(events):
            if self.transport.is_closing():
                return
            self.transport.write(stream[offsets[k] : offsets[k + 1]])
            await self.writable.wait()
            await asyncio.sleep(0)
        self.transport.write(b"0\r\n\r\n")

    def data_received(self, chunk: bytes) -> None:
        self.buf += chunk
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            head, self.buf = self.buf[:end], self.buf[end + 4 :]
            self.handle(head.split(b"\r\n", 1)[0].decode("latin-1"))

    def handle(self, request_line: str) -> None:
        assert self.transport is not None
        _method, target, _version = request_line.split(" ", 2)
        url = urlsplit(target)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        parts = url.path.strip("/").split("/")
        static = _DISCOVERY.get(url.path.rstrip("/"))
        if static is not None:
            self.transport.writelines([_response("200 OK", len(static)), static])
            return
        # api v1 namespaces bench-K-E pods
        if len(parts) != 5 or parts[:3] != ["api", "v1", "namespaces"] or parts[4] != "pods":
            print("stub: 404", target, file=sys.stderr)
            self.transport.writelines([_response("404 Not Found", len(_NOT_FOUND)), _NOT_FOUND])
            return
        try:
            _, size_s, events_s = parts[3].split("-")
            size = min(int(size_s), len(self.data.pods))
            events = min(int(events_s), len(self.data.offsets) - 1)
        except ValueError:
            self.transport.writelines([_response("404 Not Found", len(_NOT_FOUND)), _NOT_FOUND])
            return
        if query.get("watch") in ("1", "true", "True"):
            self.transport.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n"
            )
            if query.get("resourceVersion", "") not in ("", "0", str(LIST_RV)):
                return  # hold the watch open with no events
            if self.flush_per_event:
                task = asyncio.get_running_loop().create_task(self.stream_flushed(events))
                self.tasks.add(task)
                task.add_done_callback(self.tasks.discard)
            else:
                self.transport.writelines(
                    [self.data.stream[: self.data.offsets[events]], b"0\r\n\r\n"]
                )
            return
        limit = int(query["limit"]) if query.get("limit") else None
        start = int(query["continue"]) if query.get("continue") else 0
        body = self.data.page(size, start, limit)
        self.transport.writelines([_response("200 OK", sum(map(len, body))), *body])


async def _serve(data: Data, *, flush_per_event: bool) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        lambda: StubProtocol(data, flush_per_event=flush_per_event), "127.0.0.1", 0, backlog=128
    )
    port = server.sockets[0].getsockname()[1]
    print(port, flush=True)
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pods", type=int, required=True)
    parser.add_argument("--events", type=int, required=True)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--flush-per-event",
        dest="flush_per_event",
        action="store_true",
        default=True,
        help="write and drain each watch event on its own, as kube-apiserver (default)",
    )
    mode.add_argument(
        "--burst",
        dest="flush_per_event",
        action="store_false",
        help="write the whole watch stream at once",
    )
    args = parser.parse_args()
    data = Data(args.pods, args.events)
    try:
        asyncio.run(_serve(data, flush_per_event=args.flush_per_event))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
