"""OpenTelemetry spans: a reconcile span per reconcile, the API requests it makes as its
children (with a traceparent header on the wire), nothing when tracing is off."""

from __future__ import annotations

import anyio
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient, trace_requests
from kcm.models.core_v1 import ConfigMap
from kcm.models.meta_v1 import ObjectMeta
from kcm.runtime import Manager, Request, Result, trace_reconciles
from kcm.testing import client_config_for, eventually

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

pytestmark = pytest.mark.anyio


class Reader:
    """Reads the object it reconciles (one GET per reconcile); fails for ``bad``."""

    def __init__(self, client: ApiClient) -> None:
        self.client = client
        self.done: list[str] = []

    async def reconcile(self, request: Request) -> Result:
        await self.client.api(ConfigMap, request.namespace).get(request.name)
        self.done.append(request.name)
        if request.name == "bad":
            raise RuntimeError("bad config")
        return Result()


async def test_reconciles_and_their_requests_are_spans(api_server: ApiServer) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")

    async with (
        ApiClient(client_config_for(api_server)) as admin,
        ApiClient(client_config_for(api_server)) as client,
    ):
        for name in ("good", "bad"):
            await admin.api(ConfigMap, "default").create(ConfigMap(metadata=ObjectMeta(name=name)))
        with trace_requests(tracer), trace_reconciles(tracer):
            manager = Manager(client)
            reader = Reader(client)
            manager.add(manager.controller_for(ConfigMap).build(reader))
            async with anyio.create_task_group() as tg:
                tg.start_soon(manager.run)
                await eventually(lambda: {"good", "bad"} <= set(reader.done))
                tg.cancel_scope.cancel()
    provider.shutdown()
    spans = exporter.get_finished_spans()
    reconciles = {s.attributes["key"]: s for s in spans if s.name == "reconcile"}
    good, bad = reconciles["default/good"], reconciles["default/bad"]
    assert good.attributes["controller"] == "configmap"
    assert good.status.is_ok
    assert not bad.status.is_ok
    assert any(event.name == "exception" for event in bad.events)
    gets = [
        s
        for s in spans
        if s.name == "HTTP GET" and str(s.attributes["url.full"]).endswith("/configmaps/good")
    ]
    assert gets, [s.name for s in spans]
    assert gets[0].parent is not None
    assert gets[0].parent.span_id == good.context.span_id  # the request is the reconcile's child
    assert gets[0].attributes["http.response.status_code"] == 200
    lists = [s for s in spans if s.name == "HTTP GET" and s.parent is None]
    assert lists  # the informers' LIST and WATCH requests are spans of their own


async def test_without_a_tracer_nothing_is_traced(api_server: ApiServer) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    async with ApiClient(client_config_for(api_server)) as client:
        await client.api(ConfigMap, "default").list()
    provider.shutdown()
    assert exporter.get_finished_spans() == ()
