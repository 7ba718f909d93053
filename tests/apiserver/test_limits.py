"""Request limits, seen as a client sees them: an over-limit body is 413, a body that never
comes is 504, a deeply nested body is 400, too many requests at once are 429 (kube-apiserver's
answers, byte for byte where the conformance suite records them)."""

from __future__ import annotations

import json
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from kcm.apiserver import ApiServer, Limits
from kcm.apiserver._limits import long_running
from kcm.apiserver._nesting import MAX_DEPTH, deeper_than, too_deep
from kcm.testing import FakeClock

pytestmark = pytest.mark.anyio

CMS = "/api/v1/namespaces/default/configmaps"
MB3 = 3 * 1024 * 1024


def _cm(name: str, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, **extra}


def _nested(depth: int) -> str:
    """A JSON value ``depth`` arrays deep."""
    return "[" * depth + "]" * depth


class _Asgi:
    """Drive the server's ASGI app directly: the test decides when (if ever) body bytes come."""

    def __init__(self, server: ApiServer) -> None:
        self.server = server
        self.messages: list[MutableMapping[str, Any]] = []

    @staticmethod
    def scope(method: str, path: str, headers: dict[str, str]) -> dict[str, Any]:
        return {
            "type": "http",
            "method": method,
            "path": path,
            "query_string": b"",
            "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
        }

    async def send(self, message: MutableMapping[str, Any]) -> None:
        self.messages.append(message)

    @property
    def status(self) -> int:
        return int(self.messages[0]["status"])

    @property
    def body(self) -> Any:
        return json.loads(b"".join(m.get("body", b"") for m in self.messages[1:]))


# -- body size ---------------------------------------------------------------------------


async def test_a_body_over_3_mib_is_413_with_kube_apiservers_status(api_server: ApiServer) -> None:
    async with httpx.AsyncClient(base_url=api_server.url) as http:
        r = await http.post(CMS, json=_cm("big", data={"k": "x" * MB3}))
        assert r.status_code == 413
        assert r.json() == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": "Request entity too large: limit is 3145728",
            "reason": "RequestEntityTooLarge",
            "code": 413,
        }
        # the same connection pool still works, and nothing was stored
        assert (await http.get(f"{CMS}/big")).status_code == 404
        r = await http.post(CMS, json=_cm("small", data={"k": "x" * 1000}))
        assert r.status_code == 201


async def test_the_body_limit_is_configurable_and_applies_to_every_verb() -> None:
    async with (
        ApiServer(limits=Limits(max_request_body_bytes=200)) as server,
        httpx.AsyncClient(base_url=server.url) as http,
    ):
        assert (await http.post(CMS, json=_cm("a"))).status_code == 201
        big = {"data": {"k": "x" * 200}}
        merge = {"content-type": "application/merge-patch+json"}
        requests = [
            http.post(CMS, json=_cm("b", **big)),
            http.put(f"{CMS}/a", json=_cm("a", **big)),
            http.patch(f"{CMS}/a", content=json.dumps(big), headers=merge),
            http.request("DELETE", f"{CMS}/a", json={"gracePeriodSeconds": 0, **big}),
        ]
        for request in requests:
            r = await request
            assert (r.status_code, r.json()["message"]) == (
                413,
                "Request entity too large: limit is 200",
            )
        assert "data" not in (await http.get(f"{CMS}/a")).json()
    async with (
        ApiServer(limits=Limits(max_request_body_bytes=0)) as server,
        httpx.AsyncClient(base_url=server.url) as http,
    ):
        r = await http.post(CMS, content=json.dumps(_cm("c", data={"k": "x" * (MB3 + 1)})))
        assert r.status_code != 413  # no limit (the ConfigMap's own 1 MiB check may answer)


async def test_an_over_limit_body_is_not_read_to_its_end() -> None:
    """Memory stays bounded: after the limit the server reads at most 256 KiB more, drops it,
    answers 413 and stops reading (a 300 MB upload is never buffered)."""
    server = ApiServer(limits=Limits(max_request_body_bytes=1000))
    try:
        asgi = _Asgi(server)
        chunk = b"x" * 65536
        read = 0

        async def receive() -> dict[str, Any]:
            nonlocal read
            read += len(chunk)
            return {"type": "http.request", "body": chunk, "more_body": True}  # endless

        headers = {"content-type": "application/json", "content-length": str(300 * 1024**2)}
        await server.app(asgi.scope("POST", CMS, headers), receive, asgi.send)
        assert asgi.status == 413
        assert read <= 1000 + len(chunk) + 256 * 1024
    finally:
        server.close()


# -- a body that never comes ---------------------------------------------------------------


async def test_a_body_that_never_arrives_times_out_with_504() -> None:
    clock = FakeClock()
    server = ApiServer(clock=clock, limits=Limits(request_timeout=60))
    never = anyio.Event()
    try:
        asgi = _Asgi(server)

        async def receive() -> dict[str, Any]:
            await never.wait()
            raise AssertionError("unreachable")

        headers = {"content-type": "application/json", "content-length": "100"}
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.app, asgi.scope("POST", CMS, headers), receive, asgi.send)
            await clock.advance(59.9)
            assert asgi.messages == []
            assert server.app.inflight.mutating == 1
            await clock.advance(0.1)
        assert asgi.status == 504
        assert asgi.body == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": "Timeout: request did not complete within the allotted timeout",
            "reason": "Timeout",
            "details": {},
            "code": 504,
        }
        assert server.app.inflight.mutating == 0  # the slot is free again
    finally:
        server.close()


async def test_a_body_that_trickles_in_is_timed_from_the_start() -> None:
    """A client sending one byte now and then cannot keep the request alive: the timeout
    covers the whole body, not the gap between two reads."""
    clock = FakeClock()
    server = ApiServer(clock=clock, limits=Limits(request_timeout=10))
    try:
        asgi = _Asgi(server)

        async def receive() -> dict[str, Any]:
            await clock.sleep(3)
            return {"type": "http.request", "body": b" ", "more_body": True}

        async with anyio.create_task_group() as tg:
            tg.start_soon(server.app, asgi.scope("POST", CMS, {}), receive, asgi.send)
            await clock.advance(10)
        assert asgi.status == 504
    finally:
        server.close()


# -- nesting -----------------------------------------------------------------------------


def test_depth_counts_brackets_outside_strings_only() -> None:
    assert too_deep(_nested(MAX_DEPTH).encode()) is None
    body = _nested(MAX_DEPTH + 1).encode()
    assert too_deep(body) == MAX_DEPTH
    quoted = json.dumps({"s": _nested(MAX_DEPTH + 5), "t": '\\"[[['}).encode()
    assert too_deep(quoted) is None
    assert too_deep(b"x: '" + b"[" * (MAX_DEPTH + 1) + b"'", yaml=True) is None
    assert not deeper_than(json.loads(_nested(MAX_DEPTH)))
    assert deeper_than(json.loads(_nested(MAX_DEPTH + 1)))


_APPLY_TOO_DEEP = (
    f"error decoding YAML: error converting YAML to JSON: yaml: exceeded max depth of {MAX_DEPTH}"
)
_PREFIX = '{"apiVersion":"v1","kind":"Con ...'
_TOO_DEEP = [
    (
        "POST",
        CMS,
        "application/json",
        json.dumps(_cm("n"), separators=(",", ":"))[:-1] + ',"x":' + _nested(MAX_DEPTH) + "}",
        400,
        "the object provided is unrecognized (must be of type ConfigMap): couldn't get "
        "version/kind; json parse error: invalid character '[' exceeded max depth "
        f"({_PREFIX})",
    ),
    (
        "POST",
        CMS,
        "application/yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\nx: "
        + _nested(MAX_DEPTH + 1)
        + "\n",
        400,
        "the object provided is unrecognized (must be of type ConfigMap): yaml: line 5: "
        f"exceeded max depth of {MAX_DEPTH} "
        "(61706956657273696f6e3a2076310a6b696e643a20436f6e6669674d6170 ...)",
    ),
    (
        "POST",
        CMS,
        "application/yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\nx:\n"
        + "".join(" " * (i + 1) + "a:\n" for i in range(MAX_DEPTH + 5)),
        400,
        "the object provided is unrecognized (must be of type ConfigMap): yaml: line 1: "
        f"exceeded max depth of {MAX_DEPTH} "
        "(61706956657273696f6e3a2076310a6b696e643a20436f6e6669674d6170 ...)",
    ),
    (
        "PUT",
        f"{CMS}/p",
        "application/json",
        json.dumps(_cm("p"), separators=(",", ":"))[:-1] + ',"x":' + _nested(MAX_DEPTH) + "}",
        400,
        "the object provided is unrecognized (must be of type ConfigMap): couldn't get "
        "version/kind; json parse error: invalid character '[' exceeded max depth "
        f"({_PREFIX})",
    ),
    (
        "PATCH",
        f"{CMS}/p",
        "application/merge-patch+json",
        '{"x":' + _nested(MAX_DEPTH) + "}",
        400,
        "Invalid JSON Patch",
    ),
    (
        "PATCH",
        f"{CMS}/p",
        "application/strategic-merge-patch+json",
        '{"x":' + _nested(MAX_DEPTH) + "}",
        400,
        "invalid character '[' exceeded max depth",
    ),
    (
        "PATCH",
        f"{CMS}/p",
        "application/json-patch+json",
        '[{"op":"add","path":"/x","value":' + _nested(MAX_DEPTH) + "}]",
        400,
        "invalid character '[' exceeded max depth",
    ),
    (
        "PATCH",
        f"{CMS}/p?fieldManager=m",
        "application/apply-patch+yaml",
        '{"x":' + _nested(MAX_DEPTH) + "}",
        400,
        _APPLY_TOO_DEEP,
    ),
    (
        "PATCH",
        f"{CMS}/p?fieldManager=m",
        "application/apply-patch+yaml",
        "x:\n" + "".join(" " * (i + 1) + "a:\n" for i in range(MAX_DEPTH + 5)),
        400,
        _APPLY_TOO_DEEP,
    ),
    (
        "DELETE",
        f"{CMS}/p",
        "application/json",
        '{"x":' + _nested(MAX_DEPTH) + "}",
        500,
        "couldn't get version/kind; json parse error: invalid character '[' exceeded max depth",
    ),
]


async def test_a_body_nested_too_deeply_is_refused_by_every_decoder(api_server: ApiServer) -> None:
    async with httpx.AsyncClient(base_url=api_server.url) as http:
        assert (await http.post(CMS, json=_cm("p"))).status_code == 201
        for method, path, ctype, body, code, message in _TOO_DEEP:
            r = await http.request(method, path, content=body, headers={"content-type": ctype})
            assert (method, ctype, r.status_code, r.json()["message"]) == (
                method,
                ctype,
                code,
                message,
            )
        assert (await http.get(f"{CMS}/p")).status_code == 200


_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "deeps.example.com"},
    "spec": {
        "group": "example.com",
        "names": {"plural": "deeps", "singular": "deep", "kind": "Deep", "listKind": "DeepList"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                    }
                },
            }
        ],
    },
}


async def test_a_body_at_the_limit_goes_through_every_step(api_server: ApiServer) -> None:
    """The deepest body kcm accepts is stored, read, patched and applied without a
    RecursionError anywhere after the decoder (a custom resource keeps every field)."""
    deep = json.loads(_nested(MAX_DEPTH - 2))  # the object and "spec" are two more levels
    path = "/apis/example.com/v1/namespaces/default/deeps"
    obj = {"apiVersion": "example.com/v1", "kind": "Deep", "metadata": {"name": "d"}}
    async with httpx.AsyncClient(base_url=api_server.url) as http:
        assert (
            await http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=_CRD)
        ).status_code == 201
        assert (await http.get(path)).status_code == 200  # served as soon as created
        r = await http.post(path, json={**obj, "spec": deep})
        assert r.status_code == 201, r.text
        assert (await http.get(f"{path}/d")).json()["spec"] == deep
        merge = {"content-type": "application/merge-patch+json"}
        r = await http.patch(f"{path}/d", content=json.dumps({"spec": deep, "x": 1}), headers=merge)
        assert r.status_code == 200, r.text
        apply = {"content-type": "application/apply-patch+yaml"}
        r = await http.patch(
            f"{path}/d?fieldManager=m&force=true",
            content=json.dumps({**obj, "spec": deep}),
            headers=apply,
        )
        assert r.status_code == 200, r.text
        r = await http.put(f"{path}/d", json={**r.json(), "spec": deep})
        assert r.status_code == 200, r.text


# -- requests in flight ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "query", "expected"),
    [
        ("GET", "/api/v1/pods", "watch=true", True),
        ("GET", "/api/v1/pods", "watch=0", False),
        ("GET", "/api/v1/watch/pods", "", True),
        ("GET", "/apis/apps/v1/watch/namespaces/x/deployments", "", True),
        ("GET", "/api/v1/namespaces/x/pods/p/log", "", True),
        ("POST", "/api/v1/namespaces/x/pods/p/exec", "", True),
        ("GET", "/api/v1/namespaces/x/pods/p/proxy/metrics", "", True),
        ("GET", "/api/v1/nodes/n/proxy", "", True),
        ("GET", "/api/v1/namespaces/x/pods/p", "", False),
        ("GET", "/api/v1/namespaces/x/pods/p/status", "", False),
        ("POST", "/api/v1/namespaces/x/pods", "watch=true", False),
        ("GET", "/healthz", "watch=true", False),
    ],
)
def test_long_running_requests_are_those_kube_apiserver_exempts(
    method: str, path: str, query: str, expected: bool
) -> None:
    from urllib.parse import parse_qs

    parts = [p for p in path.split("/") if p]
    assert long_running(method, parts, parse_qs(query, keep_blank_values=True)) is expected


async def test_too_many_requests_in_flight_get_429_at_once() -> None:
    limits = Limits(max_requests_inflight=1, max_mutating_requests_inflight=1)
    async with (
        ApiServer(limits=limits) as server,
        httpx.AsyncClient(base_url=server.url) as http,
        anyio.create_task_group() as tg,
    ):
        answers: dict[str, int] = {}

        async def held(name: str, method: str, path: str, body: Any = None) -> None:
            r = await http.request(method, path, headers={"user-agent": "held"}, json=body)
            answers[name] = r.status_code

        server.faults.partition("held")
        tg.start_soon(held, "write", "POST", CMS, _cm("a"))
        tg.start_soon(held, "read", "GET", CMS)
        with anyio.fail_after(10):
            await server.faults.wait_held(2)  # both slots are taken and stay taken
        for method, kw in (("POST", {"json": _cm("b")}), ("GET", {}), ("DELETE", {})):
            r = await http.request(method, f"{CMS}" if method != "DELETE" else f"{CMS}/a", **kw)
            assert r.status_code == 429
            assert r.headers["retry-after"] == "1"
            assert r.headers["content-type"] == "text/plain; charset=utf-8"
            assert r.text == "Too many requests, please try again later.\n"
        # a watch is long-running: never counted, never refused
        async with http.stream("GET", CMS, params={"watch": "true", "timeoutSeconds": "1"}) as w:
            assert w.status_code == 200
        server.faults.heal()
    assert answers == {"write": 201, "read": 200}


_TOKENS = "admintoken,admin,admin-uid,system:masters\njanetoken,jane,jane-uid,dev\n"


def _bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


async def test_in_flight_limit_comes_after_authentication_and_spares_system_masters(
    tmp_path: Path,
) -> None:
    """kube-apiserver's filter order: a caller it cannot identify is 401 even when the server
    is full, ``system:masters`` is never refused for load, and authorization (403) comes
    after the limit."""
    tokens = tmp_path / "tokens.csv"
    tokens.write_text(_TOKENS)
    limits = Limits(max_requests_inflight=1, max_mutating_requests_inflight=1)
    async with (
        ApiServer(token_auth_file=tokens, limits=limits) as server,
        httpx.AsyncClient(base_url=server.url) as http,
        anyio.create_task_group() as tg,
    ):
        answers: dict[str, int] = {}

        async def held(name: str, method: str, body: Any = None) -> None:
            headers = {"user-agent": "held", **_bearer("janetoken")}
            r = await http.request(method, CMS, headers=headers, json=body)
            answers[name] = r.status_code

        server.faults.partition("held")
        tg.start_soon(held, "write", "POST", _cm("a"))
        tg.start_soon(held, "read", "GET")
        with anyio.fail_after(10):
            await server.faults.wait_held(2)
        assert (server.app.inflight.reading, server.app.inflight.mutating) == (1, 1)
        jane = _bearer("janetoken")
        assert (await http.get(CMS, headers=jane)).status_code == 429
        assert (await http.post(CMS, headers=jane, json=_cm("b"))).status_code == 429
        for headers in ({}, _bearer("nosuchtoken")):
            assert (await http.get(CMS, headers=headers)).status_code == 401
        admin = _bearer("admintoken")
        assert (await http.post(CMS, headers=admin, json=_cm("c"))).status_code == 201
        assert (await http.get(CMS, headers=admin)).status_code == 200
        server.faults.heal()
    assert answers == {"write": 403, "read": 403}
    assert (server.app.inflight.reading, server.app.inflight.mutating) == (0, 0)


async def test_in_flight_slots_are_given_back_after_errors() -> None:
    server = ApiServer(limits=Limits(max_requests_inflight=1, max_mutating_requests_inflight=1))
    try:

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"{", "more_body": False}

        for method, path, code in (
            ("GET", f"{CMS}/missing", 404),
            ("POST", CMS, 400),
            ("GET", "/nope", 404),
            ("POST", CMS, 400),
        ):
            asgi = _Asgi(server)
            await server.app(asgi.scope(method, path, {}), receive, asgi.send)
            assert asgi.status == code
            assert (server.app.inflight.reading, server.app.inflight.mutating) == (0, 0)
    finally:
        server.close()
