"""Error mapping (Status bodies, httpx exceptions), retries with Retry-After, rate limiting."""

from __future__ import annotations

import socket
import ssl
from collections.abc import Callable
from typing import Any

import anyio
import httpx
import pytest

from kcm.client import ApiClient, RetryPolicy, TokenBucket
from kcm.client._errors import error_from_response, parse_retry_after
from kcm.errors import (
    AlreadyExists,
    ApiError,
    BadRequest,
    Conflict,
    ConnectionFailed,
    Forbidden,
    InternalError,
    Invalid,
    NotFound,
    RequestTimeout,
    ResourceExpired,
    ServiceUnavailable,
    StatusCause,
    TlsVerificationFailed,
    TooManyRequests,
    TransportError,
    Unauthorized,
    api_error_from_status,
)
from kcm.models import ObjectMeta, Pod
from kcm.testing import FakeClock

pytestmark = pytest.mark.anyio

MakeClient = Callable[..., ApiClient]
POD = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p", "namespace": "ns"}}


@pytest.mark.parametrize(
    ("code", "reason", "expected"),
    [
        (400, "BadRequest", BadRequest),
        (401, "Unauthorized", Unauthorized),
        (403, "Forbidden", Forbidden),
        (404, "NotFound", NotFound),
        (409, "AlreadyExists", AlreadyExists),
        (409, "Conflict", Conflict),
        (410, "Expired", ResourceExpired),
        (422, "Invalid", Invalid),
        (500, "InternalError", InternalError),
    ],
)
async def test_status_bodies_map_to_typed_errors(
    make_client: MakeClient, server: Any, code: int, reason: str, expected: type[ApiError]
) -> None:
    server.status(code, reason, f"the {reason} message")
    async with make_client() as client:
        with pytest.raises(expected) as info:
            await client.api(Pod, namespace="ns").create(Pod(metadata=ObjectMeta(name="p")))
    assert type(info.value) is expected
    assert info.value.code == code
    assert info.value.message == f"the {reason} message"
    assert len(server.requests) == 1  # writes are not retried without Retry-After


async def test_invalid_carries_causes(make_client: MakeClient, server: Any) -> None:
    server.status(
        422,
        "Invalid",
        "Pod is invalid",
        extra={
            "details": {
                "causes": [
                    {"reason": "FieldValueRequired", "message": "Required", "field": "spec.x"}
                ]
            }
        },
    )
    async with make_client() as client:
        with pytest.raises(Invalid) as info:
            await client.api(Pod).patch("p", {})
    assert info.value.causes == [
        StatusCause(reason="FieldValueRequired", message="Required", field="spec.x")
    ]


def test_non_status_body_keeps_code_and_text() -> None:
    response = httpx.Response(502, content=b"<html>bad gateway</html>")
    err = error_from_response(response, response.content)
    assert err.code == 502
    assert "bad gateway" in err.message
    forbidden = httpx.Response(403, content=b"")
    assert isinstance(error_from_response(forbidden, b""), Forbidden)


def test_retry_after_parsing() -> None:
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("Thu, 01 Jan 1970 00:00:10 GMT", now=4.0) == 6.0
    response = httpx.Response(429, headers={"Retry-After": "7"}, json={"kind": "Status"})
    err = error_from_response(response, response.content)
    assert isinstance(err, TooManyRequests)
    assert err.retry_after == 7.0


async def test_connection_error_names_server(make_client: MakeClient, server: Any) -> None:
    server.responses.append(httpx.ConnectError("connection refused"))
    async with make_client(server="https://down.example:6443") as client:
        with pytest.raises(TransportError, match=r"down\.example:6443") as info:
            await client.api(Pod).create(Pod(metadata=ObjectMeta(name="p")))
    assert info.value.server == "https://down.example:6443"
    assert isinstance(info.value.__cause__, httpx.ConnectError)


async def test_timeout_maps_to_request_timeout(make_client: MakeClient, server: Any) -> None:
    server.responses.append(httpx.ReadTimeout("slow"))
    async with make_client() as client:
        with pytest.raises(RequestTimeout):
            await client.api(Pod).create(Pod(metadata=ObjectMeta(name="p")))


async def _run_with_clock(clock: FakeClock, fn: Callable[[], Any]) -> tuple[Any, float]:
    """Run ``fn`` while advancing the fake clock; return its result and the virtual time."""
    result: dict[str, Any] = {}
    start = clock.monotonic()

    async def run() -> None:
        try:
            result["value"] = await fn()
        except Exception as exc:
            result["error"] = exc
        result["t"] = clock.monotonic() - start

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        while "t" not in result:
            await clock.advance(0.05)
    if "error" in result:
        raise result["error"]
    return result.get("value"), result["t"]


async def test_get_retried_after_transport_errors_and_5xx(
    make_client: MakeClient, server: Any
) -> None:
    clock = FakeClock()
    server.responses.append(httpx.ReadError("connection reset by peer"))
    server.status(503, "ServiceUnavailable")
    server.add(200, POD)
    async with make_client(clock=clock) as client:
        pod, elapsed = await _run_with_clock(clock, lambda: client.api(Pod, "ns").get("p"))
    assert pod.metadata.name == "p"
    assert len(server.requests) == 3
    assert 0.0 < elapsed < 2.0  # jittered backoff: 0.1-0.2 s then 0.2-0.4 s


async def test_retry_after_is_honoured_for_writes(make_client: MakeClient, server: Any) -> None:
    clock = FakeClock()
    server.status(429, "TooManyRequests", headers={"Retry-After": "3"})
    server.add(201, POD)
    async with make_client(clock=clock) as client:
        _, elapsed = await _run_with_clock(
            clock, lambda: client.api(Pod, "ns").create(Pod(metadata=ObjectMeta(name="p")))
        )
    assert len(server.requests) == 2
    assert elapsed == pytest.approx(3.0, abs=0.06)
    assert server.requests[0].content == server.requests[1].content


async def test_write_without_retry_after_not_retried(make_client: MakeClient, server: Any) -> None:
    server.status(503, "ServiceUnavailable")
    async with make_client() as client:
        with pytest.raises(ServiceUnavailable):
            await client.api(Pod, "ns").create(Pod(metadata=ObjectMeta(name="p")))
    assert len(server.requests) == 1


async def test_retries_are_bounded(make_client: MakeClient, server: Any) -> None:
    clock = FakeClock()
    server.default = httpx.Response(
        500, json={"kind": "Status", "code": 500, "reason": "InternalError", "message": "boom"}
    )
    async with make_client(clock=clock) as client:
        with pytest.raises(InternalError, match="boom"):
            await _run_with_clock(clock, lambda: client.api(Pod, "ns").get("p"))
    assert len(server.requests) == 10


def test_retry_policy_rules() -> None:
    policy = RetryPolicy(max_tries=3, base_delay=1.0, max_delay=5.0)
    ok = policy.should_retry
    assert ok(method="GET", attempt=1, status=None, retry_after=None)
    assert not ok(method="POST", attempt=1, status=None, retry_after=None)
    assert ok(method="POST", attempt=1, status=503, retry_after=1.0)
    assert not ok(method="POST", attempt=1, status=503, retry_after=None)
    assert not ok(method="GET", attempt=1, status=404, retry_after=None)
    assert not ok(method="GET", attempt=3, status=500, retry_after=None)
    assert policy.delay(1, 60.0) == 5.0  # Retry-After capped
    assert 0.5 <= policy.delay(1, None) <= 1.0
    assert 2.0 <= policy.delay(3, None) <= 4.0


# ----------------------------------------------------------------------------- rate limit


def test_token_bucket_reservations() -> None:
    clock = FakeClock()
    bucket = TokenBucket(2.0, 3, clock=clock)
    assert [bucket.reserve() for _ in range(3)] == [0.0, 0.0, 0.0]  # the burst
    assert bucket.reserve() == pytest.approx(0.5)
    assert bucket.reserve() == pytest.approx(1.0)  # queued behind the previous reservation
    off = TokenBucket(-1, 3, clock=clock)
    assert not off.enabled
    assert all(off.reserve() == 0.0 for _ in range(100))


async def test_requests_wait_for_the_rate_limiter(make_client: MakeClient, server: Any) -> None:
    clock = FakeClock()
    server.default = httpx.Response(200, json=POD)
    sent_at: list[float] = []

    async with make_client(clock=clock, qps=2, burst=2) as client:

        async def one() -> None:
            await client.api(Pod, "ns").get("p")
            sent_at.append(clock.monotonic() - 1000.0)

        async with anyio.create_task_group() as tg:
            for _ in range(5):
                tg.start_soon(one)
            await clock.advance(0.0)
            assert len(sent_at) == 2  # the burst goes at once
            await clock.advance(0.5)
            assert len(sent_at) == 3
            await clock.advance(1.0)
    assert sent_at == pytest.approx([0.0, 0.0, 0.5, 1.0, 1.5])


async def test_rate_limit_off_with_negative_qps(make_client: MakeClient, server: Any) -> None:
    clock = FakeClock()
    server.default = httpx.Response(200, json=POD)
    async with make_client(clock=clock, qps=-1, burst=1) as client:
        for _ in range(50):
            await client.api(Pod, "ns").get("p")
    assert clock.monotonic() == 1000.0
    assert len(server.requests) == 50


@pytest.mark.parametrize(
    ("cause", "error"),
    [
        (ConnectionRefusedError(111, "Connection refused"), ConnectionFailed),
        (socket.gaierror(-2, "Name or service not known"), ConnectionFailed),
        (ssl.SSLCertVerificationError(1, "certificate verify failed"), TlsVerificationFailed),
    ],
)
async def test_what_retrying_cannot_fix_fails_at_once(
    make_client: MakeClient, server: Any, cause: BaseException, error: type[Exception]
) -> None:
    """A refused connection, an unknown host or an untrusted certificate: one request, a
    typed error (client-go retries only resets and EOFs of GETs)."""
    failure = httpx.ConnectError("cannot connect")
    failure.__cause__ = cause
    server.responses.append(failure)
    server.add(200, POD)
    async with make_client() as client:
        with pytest.raises(error) as info:
            await client.api(Pod, "ns").get("p")
    assert len(server.requests) == 1
    assert isinstance(info.value, TransportError)


@pytest.mark.parametrize(
    "status",
    [
        {"kind": "Status", "code": "abc", "reason": "BadRequest"},
        {"kind": "Status", "code": True, "details": "not an object"},
        {"kind": "Status", "details": {"causes": "not a list"}},
        {"kind": "Status", "details": {"causes": [1, "x", {"field": "a"}]}},
    ],
)
def test_a_malformed_status_still_gives_a_typed_error(status: dict[str, Any]) -> None:
    error = api_error_from_status(status, code=400)
    assert isinstance(error, BadRequest)
    assert error.code == 400
