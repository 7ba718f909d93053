"""The manager's health/metrics ASGI app and address parsing, without a socket."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import CollectorRegistry, Counter

from kcm.runtime import HealthCheck
from kcm.runtime._health_server import HealthzApp, parse_address

pytestmark = pytest.mark.anyio


async def get(
    app: HealthzApp, path: str, query: str = "", method: str = "GET", accept: str = ""
) -> tuple[int, str, dict[str, str]]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    headers = [(b"accept", accept.encode())] if accept else []
    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "query_string": query.encode(),
        "headers": headers,
    }
    await app(scope, receive, send)
    start, body = sent
    head = {k.decode(): v.decode() for k, v in start["headers"]}
    return start["status"], body["body"].decode(), head


def broken() -> None:
    raise RuntimeError("database unreachable")


async def fine_async() -> None:
    return None


def make_app() -> HealthzApp:
    registry = CollectorRegistry()
    Counter("demo_requests", "demo", registry=registry).inc(3)
    checks: dict[str, dict[str, HealthCheck]] = {
        "healthz": {"ping": lambda: None, "async": fine_async},
        "readyz": {"ping": lambda: None, "db": broken},
    }
    return HealthzApp(checks, registry)


async def test_health_endpoints_answer_like_kube_apiserver() -> None:
    app = make_app()
    status, body, head = await get(app, "/healthz")
    assert (status, body) == (200, "ok")
    assert head["content-type"] == "text/plain; charset=utf-8"
    status, body, _ = await get(app, "/healthz", "verbose")
    assert (status, body) == (200, "[+]ping ok\n[+]async ok\nhealthz check passed\n")
    status, body, _ = await get(app, "/readyz")
    assert status == 500
    assert body == "[+]ping ok\n[-]db failed: reason withheld\nreadyz check failed\n"
    status, body, _ = await get(app, "/readyz", "verbose=1")
    assert "[-]db failed: database unreachable" in body
    status, body, _ = await get(app, "/readyz", "exclude=db")
    assert (status, body) == (200, "ok")
    assert (await get(app, "/readyz/ping"))[:2] == (200, "ok")
    status, body, _ = await get(app, "/readyz/db")
    assert status == 500
    assert "database unreachable" in body
    assert (await get(app, "/readyz/nope"))[0] == 404
    assert (await get(app, "/livez"))[0] == 404
    assert (await get(app, "/healthz", method="POST"))[0] == 405


async def test_metrics_in_text_and_openmetrics_format() -> None:
    app = make_app()
    status, body, head = await get(app, "/metrics")
    assert status == 200
    assert "demo_requests_total 3.0" in body
    assert head["content-type"].startswith("text/plain; version=0.0.4")
    _, body, head = await get(app, "/metrics", accept="application/openmetrics-text")
    assert head["content-type"].startswith("application/openmetrics-text")
    assert body.endswith("# EOF\n")


def test_parse_address() -> None:
    assert parse_address("127.0.0.1:0") == ("127.0.0.1", 0)
    assert parse_address(":8080") == ("0.0.0.0", 8080)
    assert parse_address("[::1]:10257") == ("::1", 10257)
    for bad in ("localhost", "host:port", "h:70000"):
        with pytest.raises(ValueError, match="host:port"):
            parse_address(bad)
