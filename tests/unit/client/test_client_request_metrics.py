"""client-go's ``rest_client_*`` metrics and request log lines from the client's one hook."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from prometheus_client import CollectorRegistry

from kcm.client import ApiClient, RequestMetrics, observe_requests, url_template
from kcm.models import ConfigMap, ObjectMeta

from .conftest import Recorder

pytestmark = pytest.mark.anyio

BASE = "https://k8s.test:6443"


TEMPLATES = [
    # the cases of client-go 1.24's finalURLTemplate
    ("/api", "/api"),
    ("/apis", "/apis"),
    ("/healthz", "/healthz"),
    ("/api/v1", "/api/v1"),
    ("/api/v1/pods", "/api/v1/pods"),
    ("/api/v1/nodes/n1", "/api/v1/nodes/{name}"),
    ("/api/v1/nodes/n1/status", "/api/v1/nodes/{name}/status"),
    ("/api/v1/namespaces/ns", "/api/v1/namespaces/{name}"),
    ("/api/v1/namespaces/ns/finalize", "/api/v1/namespaces/{name}/finalize"),
    ("/api/v1/namespaces/ns/pods", "/api/v1/namespaces/{namespace}/pods"),
    ("/api/v1/namespaces/ns/pods/p", "/api/v1/namespaces/{namespace}/pods/{name}"),
    (
        "/api/v1/namespaces/ns/pods/p/eviction",
        "/api/v1/namespaces/{namespace}/pods/{name}/eviction",
    ),
    (
        "/api/v1/namespaces/ns/pods/p/status",
        "/api/v1/namespaces/{namespace}/pods/{name}/status",
    ),
    (
        "/apis/apps/v1/namespaces/ns/deployments",
        "/apis/apps/v1/namespaces/{namespace}/deployments",
    ),
    (
        "/apis/apps/v1/namespaces/ns/deployments/d/scale",
        "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale",
    ),
    ("/apis/coordination.k8s.io/v1", "/apis/coordination.k8s.io/v1"),
    ("/version/x/y", "/{prefix}"),
    (
        "/api/v1/pods?resourceVersion=12&limit=500",
        "/api/v1/pods?limit=%7Bvalue%7D&resourceVersion=%7Bvalue%7D",
    ),
]


@pytest.mark.parametrize(("url", "template"), TEMPLATES)
def test_url_template_is_client_gos(url: str, template: str) -> None:
    assert url_template(BASE + url) == BASE + template


@pytest.mark.parametrize("base", [BASE, "http://127.0.0.1:8080", "https://[::1]:6443/prefix"])
@pytest.mark.parametrize(("url", "template"), TEMPLATES)
def test_a_request_is_timed_under_its_url_template(base: str, url: str, template: str) -> None:
    registry = CollectorRegistry()
    RequestMetrics(registry).observe("GET", base + url, "h", 200, 0.002)
    labels = {"verb": "GET", "url": url_template(base + url)}
    assert registry.get_sample_value("rest_client_request_duration_seconds_count", labels) == 1


def test_requests_to_many_names_share_one_series_past_the_per_url_bound() -> None:
    """A manager writes to more distinct URLs than the per-URL cache keeps: every request is
    still timed, under the one template."""
    registry = CollectorRegistry()
    metrics = RequestMetrics(registry)
    for n in range(5000):  # > the 4,096 URLs whose series are remembered
        metrics.observe("PATCH", f"{BASE}/api/v1/namespaces/ns/pods/p{n}/status", "h", 200, 0.1)
    labels = {
        "verb": "PATCH",
        "url": f"{BASE}/api/v1/namespaces/{{namespace}}/pods/{{name}}/status",
    }
    assert registry.get_sample_value("rest_client_request_duration_seconds_count", labels) == 5000


async def test_every_round_trip_is_counted_by_code_method_and_host(
    server: Recorder, make_client: Callable[..., ApiClient]
) -> None:
    registry = CollectorRegistry()
    server.add(201, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}})
    server.status(409, "AlreadyExists")
    with observe_requests(RequestMetrics(registry)):
        async with make_client() as client:
            cms = client.api(ConfigMap, namespace="ns")
            await cms.create(ConfigMap(metadata=ObjectMeta(name="a")))
            with pytest.raises(Exception, match="AlreadyExists"):
                await cms.create(ConfigMap(metadata=ObjectMeta(name="a")))
    labels = {"method": "POST", "host": "k8s.test:6443"}
    for code in ("201", "409"):
        total = registry.get_sample_value("rest_client_requests_total", {"code": code, **labels})
        assert total == 1.0
    url = BASE + "/api/v1/namespaces/{namespace}/configmaps"
    count = registry.get_sample_value(
        "rest_client_request_duration_seconds_count", {"verb": "POST", "url": url}
    )
    assert count == 2.0


async def test_outside_observe_requests_nothing_is_counted(
    server: Recorder, make_client: Callable[..., ApiClient]
) -> None:
    registry = CollectorRegistry()
    metrics = RequestMetrics(registry)
    server.add(200, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}})
    async with make_client() as client:
        await client.api(ConfigMap, namespace="ns").get("a")
    del metrics
    assert (
        registry.get_sample_value(
            "rest_client_requests_total", {"code": "200", "method": "GET", "host": "k8s.test:6443"}
        )
        is None
    )


async def test_request_lines_at_klog_levels(
    server: Recorder, make_client: Callable[..., ApiClient], caplog: pytest.LogCaptureFixture
) -> None:
    body = '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}'
    server.add(200, body)
    caplog.set_level(5, logger="kcm.client.requests")  # -v=9
    async with make_client(token="secret") as client:
        await client.api(ConfigMap, namespace="ns").get("a")
    lines = [(r.levelno, r.getMessage()) for r in caplog.records]
    assert any(
        level == 8 and msg.startswith(f"GET {BASE}/api/v1/namespaces/ns/configmaps/a 200 in ")
        for level, msg in lines
    ), lines
    assert (7, "Request Header: authorization: <masked>") in lines
    assert (6, f"Response Body: {body}") in lines
    assert "secret" not in caplog.text


async def test_a_traced_request_carries_its_trace_context(
    server: Recorder, make_client: Callable[..., ApiClient]
) -> None:
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider

    from kcm.client import trace_requests

    tracer = TracerProvider().get_tracer("test")
    server.add(200, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}})
    server.add(200, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}})
    async with make_client() as client:
        with trace_requests(tracer):
            await client.api(ConfigMap, namespace="ns").get("a")
        await client.api(ConfigMap, namespace="ns").get("a")
    traced, plain = server.requests
    assert traced.headers["traceparent"].startswith("00-")
    assert "traceparent" not in plain.headers
